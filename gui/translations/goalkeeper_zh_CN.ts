<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name></name>
    <message>
        <source>&amp;Start</source>
        <translation>启动(&amp;S)</translation>
    </message>
    <message>
        <source>Start this idle goal</source>
        <translation>启动这个空闲的目标</translation>
    </message>
    <message>
        <source>&amp;Resume</source>
        <translation>恢复(&amp;R)</translation>
    </message>
    <message>
        <source>Resume this paused goal now</source>
        <translation>立即恢复这个已暂停的目标</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>暂停(&amp;P)</translation>
    </message>
    <message>
        <source>Pause this goal; it is never resumed automatically</source>
        <translation>暂停这个目标；之后永不自动恢复</translation>
    </message>
    <message>
        <source>&amp;Cancel goal…</source>
        <translation>取消目标(&amp;C)…</translation>
    </message>
    <message>
        <source>Stop this goal for good (asks first)</source>
        <translation>永久停止这个目标（会先确认）</translation>
    </message>
    <message>
        <source>&amp;Auto-resume</source>
        <translation>自动恢复(&amp;A)</translation>
    </message>
    <message>
        <source>Resume automatically once the quota has refreshed</source>
        <translation>配额刷新后自动恢复</translation>
    </message>
    <message>
        <source>Open in &amp;terminal</source>
        <translation>在终端中打开(&amp;T)</translation>
    </message>
    <message>
        <source>Open this goal in a terminal</source>
        <translation>在终端中打开这个目标</translation>
    </message>
    <message>
        <source>Open &amp;folder</source>
        <translation>打开文件夹(&amp;F)</translation>
    </message>
    <message>
        <source>Open the goal&apos;s working directory</source>
        <translation>打开这个目标的工作目录</translation>
    </message>
    <message>
        <source>&amp;Details…</source>
        <translation>详情(&amp;D)…</translation>
    </message>
    <message>
        <source>Everything about this goal</source>
        <translation>这个目标的全部信息</translation>
    </message>
    <message>
        <source>{tip} ({shortcut})</source>
        <translation>{tip}（{shortcut}）</translation>
    </message>
    <message>
        <source>Goal actions</source>
        <translation>目标操作</translation>
    </message>
    <message>
        <source>Cancel goal?</source>
        <translation>取消目标？</translation>
    </message>
    <message>
        <source>Cancel “{title}” for good?</source>
        <translation>要永久取消“{title}”吗？</translation>
    </message>
    <message>
        <source>Goalkeeper stops it and never resumes it. The agent&apos;s own work and files are left as they are.</source>
        <translation>Goalkeeper 会停止它，并且不再恢复它。代理自己的工作成果和文件保持原样。</translation>
    </message>
    <message>
        <source>Cancel goal</source>
        <translation>取消目标</translation>
    </message>
    <message>
        <source>Keep it</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>{title}: {message}</source>
        <translation>{title}：{message}</translation>
    </message>
    <message>
        <source>Goalkeeper cannot read its settings:

{error}</source>
        <translation>Goalkeeper 无法读取设置：

{error}</translation>
    </message>
    <message>
        <source>Demo data kept in {dir} (GOALKEEPER_HOME={dir} goalkeeper history)</source>
        <translation>演示数据保留在 {dir}（查看历史：GOALKEEPER_HOME={dir} goalkeeper history）</translation>
    </message>
    <message>
        <source>Goalkeeper is already open (pid {pid}); its window was brought to the front.</source>
        <translation>Goalkeeper 已经打开（pid {pid}）；已把它的窗口调到前台。</translation>
    </message>
    <message>
        <source>Goalkeeper cannot open its database:

{error}</source>
        <translation>Goalkeeper 无法打开它的数据库：

{error}</translation>
    </message>
    <message>
        <source>Title</source>
        <extracomment>the rows, in order (``field()`` takes these English names)</extracomment>
        <translation>标题</translation>
    </message>
    <message>
        <source>Id</source>
        <extracomment>the rows behind &quot;Technical details&quot;</extracomment>
        <translation>ID</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>提供方</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Pause reason</source>
        <translation>暂停原因</translation>
    </message>
    <message>
        <source>Windows</source>
        <translation>配额窗口</translation>
    </message>
    <message>
        <source>Auto-resume</source>
        <translation>自动恢复</translation>
    </message>
    <message>
        <source>Next auto-resume</source>
        <translation>下次自动恢复</translation>
    </message>
    <message>
        <source>Quota resets</source>
        <translation>配额重置</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Last resumed</source>
        <translation>上次恢复</translation>
    </message>
    <message>
        <source>Budget spent</source>
        <translation>已用预算</translation>
    </message>
    <message>
        <source>Last run</source>
        <translation>上次运行</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <source>Last change</source>
        <translation>最近变更</translation>
    </message>
    <message>
        <source>Runner fence</source>
        <translation>运行序号</translation>
    </message>
    <message>
        <source>Goal details</source>
        <translation>目标详情</translation>
    </message>
    <message>
        <source>{field}:</source>
        <translation>{field}：</translation>
    </message>
    <message>
        <source>Technical details</source>
        <translation>技术细节</translation>
    </message>
    <message>
        <source>Provider data</source>
        <translation>提供方数据</translation>
    </message>
    <message>
        <source>Provider data:</source>
        <translation>提供方数据：</translation>
    </message>
    <message>
        <source>{attempts} of {cap} automatic resumes tried since it paused</source>
        <translation>自本次暂停以来已尝试自动恢复 {attempts} 次（上限 {cap} 次）</translation>
    </message>
    <message>
        <source>Show &amp;history</source>
        <translation>查看历史(&amp;H)</translation>
    </message>
    <message>
        <source>no longer watched</source>
        <translation>不再关注</translation>
    </message>
    <message>
        <source>{state} since {when}</source>
        <translation>自 {when} 起{state}</translation>
    </message>
    <message>
        <source>on</source>
        <extracomment>this host&apos;s id: the goals of other hosts (a shared store) name their host</extracomment>
        <translation>开</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>{attempts} in this episode (runner fence {fence})</source>
        <translation type="vanished">本轮尝试 {attempts}（运行器令牌 {fence}）</translation>
    </message>
    <message>
        <source>Goal details — {title}</source>
        <translation>目标详情 — {title}</translation>
    </message>
    <message>
        <source>The ntfy access token and the webhook&apos;s signing secret are kept in the OS keyring, never in config.toml; store them with&lt;br&gt;&lt;code&gt;goalkeeper secret set ntfy-token&lt;/code&gt;&lt;br&gt;&lt;code&gt;goalkeeper secret set webhook-secret&lt;/code&gt;</source>
        <translation>ntfy 的访问令牌和 Webhook 的签名密钥保存在系统密钥环中，从不写入 config.toml；用以下命令保存：&lt;br&gt;&lt;code&gt;goalkeeper secret set ntfy-token&lt;/code&gt;&lt;br&gt;&lt;code&gt;goalkeeper secret set webhook-secret&lt;/code&gt;</translation>
    </message>
    <message>
        <source>{n} defined: {listed}.</source>
        <extracomment>sends a test message with these settings; answers (channel, delivered, reason) per channel</extracomment>
        <translation>已定义 {n} 个：{listed}。</translation>
    </message>
    <message>
        <source>None defined.</source>
        <translation>尚未定义。</translation>
    </message>
    <message>
        <source>{head} Edit the [{name}.&lt;name&gt;] tables in {file}; saving here keeps them as they are.</source>
        <translation>{head}请在 {file} 中编辑 [{name}.&lt;name&gt;] 表；在这里保存不会改动它们。</translation>
    </message>
    <message>
        <source>Goalkeeper settings</source>
        <translation>Goalkeeper 设置</translation>
    </message>
    <message>
        <source>Settings problems</source>
        <translation>设置中的问题</translation>
    </message>
    <message>
        <source>Notification and start-at-login changes apply at once; the others when Goalkeeper next starts. Saved to {file}.</source>
        <translation>通知和登录时启动的改动立即生效；其他改动在 Goalkeeper 下次启动时生效。保存到 {file}。</translation>
    </message>
    <message>
        <source>Restore &amp;defaults</source>
        <translation>恢复默认值(&amp;D)</translation>
    </message>
    <message>
        <source>{problem}
Showing the defaults; saving replaces the file.</source>
        <translation>{problem}
正在显示默认值；保存会替换这个文件。</translation>
    </message>
    <message>
        <source>Where the notification secrets are kept</source>
        <translation>通知密钥的存放位置</translation>
    </message>
    <message>
        <source>Send a &amp;test notification</source>
        <translation>发送测试通知(&amp;T)</translation>
    </message>
    <message>
        <source>Send a test notification</source>
        <translation>发送测试通知</translation>
    </message>
    <message>
        <source>Sends a test message to ntfy and the webhook with the values above, saved or not.</source>
        <translation>用上面的值（无论是否已保存）向 ntfy 和 Webhook 发送一条测试消息。</translation>
    </message>
    <message>
        <source>Test notification result</source>
        <translation>测试通知结果</translation>
    </message>
    <message>
        <source>not set</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>Set by {variable} — the environment wins over the file.</source>
        <translation>由 {variable} 设置 — 环境变量优先于文件。</translation>
    </message>
    <message>
        <source>Allowed: {bounds}</source>
        <translation>允许范围：{bounds}</translation>
    </message>
    <message>
        <source>Default: {default} · {variable} overrides it</source>
        <translation>默认值：{default} · 可用 {variable} 覆盖</translation>
    </message>
    <message>
        <source>Fix the settings above first.</source>
        <translation>请先修正上面的设置。</translation>
    </message>
    <message>
        <source>Not available here.</source>
        <translation>此处不可用。</translation>
    </message>
    <message>
        <source>Set an ntfy topic URL or a webhook URL first.</source>
        <translation>请先设置 ntfy 主题 URL 或 Webhook URL。</translation>
    </message>
    <message>
        <source>Sending…</source>
        <translation>正在发送…</translation>
    </message>
    <message>
        <source>{channel}: delivered</source>
        <translation>{channel}：已送达</translation>
    </message>
    <message>
        <source>{channel}: NOT delivered — {reason}</source>
        <translation>{channel}：未送达 — {reason}</translation>
    </message>
    <message>
        <source>Could not write {file}: {error}</source>
        <translation>无法写入 {file}：{error}</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>启动</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>{reason}: {detail}</source>
        <translation>{reason}：{detail}</translation>
    </message>
    <message>
        <source>due now</source>
        <translation>现在到期</translation>
    </message>
    <message>
        <source>at {time} ({rule})</source>
        <translation>{time}（{rule}）</translation>
    </message>
    <message>
        <source>auto-resume off</source>
        <translation>自动恢复：关</translation>
    </message>
    <message>
        <source>resuming…</source>
        <translation>恢复中…</translation>
    </message>
    <message>
        <source>Automatic resume not before {when}</source>
        <translation>自动恢复不早于 {when}</translation>
    </message>
    <message>
        <source> ({rule})</source>
        <translation>（{rule}）</translation>
    </message>
    <message>
        <source>Quota resets {when}</source>
        <translation>配额于 {when} 重置</translation>
    </message>
    <message>
        <source>budget {percent} %</source>
        <translation>预算 {percent} %</translation>
    </message>
    <message>
        <source>nothing this period ({budget})</source>
        <translation>本周期尚未使用（{budget}）</translation>
    </message>
    <message>
        <source>{percent} % of {window}</source>
        <translation>{window} 的 {percent} %</translation>
    </message>
    <message>
        <source>{spent} this period ({budget})</source>
        <translation>本周期 {spent}（{budget}）</translation>
    </message>
    <message>
        <source>, </source>
        <translation>，</translation>
    </message>
    <message>
        <source>ran {duration} on the last window</source>
        <translation>上一个窗口运行了 {duration}</translation>
    </message>
    <message>
        <source>later</source>
        <translation>稍后</translation>
    </message>
    <message>
        <source>Deferred until {when} ({reason})</source>
        <translation>推迟到 {when}（{reason}）</translation>
    </message>
    <message>
        <source>Deferred until {when}</source>
        <translation>推迟到 {when}</translation>
    </message>
    <message>
        <source>Queued: starts at {when}</source>
        <translation>已排队：将于 {when} 开始</translation>
    </message>
    <message>
        <source>Refused: {reason}</source>
        <translation>已拒绝：{reason}</translation>
    </message>
    <message>
        <source>not allowed</source>
        <translation>不允许</translation>
    </message>
    <message>
        <source>Failed: {reason}</source>
        <translation>失败：{reason}</translation>
    </message>
    <message>
        <source>the agent could not be started</source>
        <translation>无法启动代理</translation>
    </message>
    <message>
        <source>Unchanged</source>
        <translation>未改变</translation>
    </message>
    <message>
        <source>Already running</source>
        <translation>已在运行</translation>
    </message>
    <message>
        <source>Already resuming</source>
        <translation>已在恢复中</translation>
    </message>
    <message>
        <source>Already paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Unknown goal</source>
        <translation>未知目标</translation>
    </message>
    <message>
        <source>Updated</source>
        <translation>已更新</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>已启动</translation>
    </message>
    <message>
        <source>Already done (the agent had finished it)</source>
        <translation>已经完成（代理已经完成了它）</translation>
    </message>
    <message>
        <source>Resumed ({reason})</source>
        <translation>已恢复（{reason}）</translation>
    </message>
    <message>
        <source>Resumed</source>
        <translation>已恢复</translation>
    </message>
    <message>
        <source>{percent} % used</source>
        <translation>已用 {percent} %</translation>
    </message>
    <message>
        <source>{used} of {limit} used</source>
        <translation>已用 {used}/{limit}</translation>
    </message>
    <message>
        <source>usage unknown</source>
        <translation>用量未知</translation>
    </message>
    <message>
        <source>resets {countdown}</source>
        <translation>{countdown}重置</translation>
    </message>
    <message>
        <source>no timed reset</source>
        <translation>没有定时重置</translation>
    </message>
    <message>
        <source>reset time unknown</source>
        <translation>重置时间未知</translation>
    </message>
    <message>
        <source>Resets {when}</source>
        <translation>于 {when} 重置</translation>
    </message>
    <message>
        <source>Read {when} ({age} ago)</source>
        <translation>读取于 {when}（{age}前）</translation>
    </message>
    <message>
        <source>stale · {age}</source>
        <translation>过时 · {age}</translation>
    </message>
    <message>
        <source>started</source>
        <translation>已启动</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>resume claimed</source>
        <translation>已认领恢复</translation>
    </message>
    <message>
        <source>resumed</source>
        <translation>已恢复</translation>
    </message>
    <message>
        <source>back to paused</source>
        <translation>回到暂停</translation>
    </message>
    <message>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>running (outside Goalkeeper)</source>
        <translation>运行中（在 Goalkeeper 之外）</translation>
    </message>
    <message>
        <source>reset to idle</source>
        <translation>重置为空闲</translation>
    </message>
    <message>
        <source>run finished</source>
        <translation>本轮运行结束</translation>
    </message>
    <message>
        <source>resume requested</source>
        <translation>请求恢复</translation>
    </message>
    <message>
        <source>pause requested</source>
        <translation>请求暂停</translation>
    </message>
    <message>
        <source>cancel requested</source>
        <translation>请求取消</translation>
    </message>
    <message>
        <source>auto-resume scheduled</source>
        <translation>已安排自动恢复</translation>
    </message>
    <message>
        <source>not scheduled</source>
        <translation>未安排</translation>
    </message>
    <message>
        <source>gave up</source>
        <translation>已放弃</translation>
    </message>
    <message>
        <source>quota exhausted</source>
        <translation>配额耗尽</translation>
    </message>
    <message>
        <source>quota recovered</source>
        <translation>配额重新可用</translation>
    </message>
    <message>
        <source>discovered</source>
        <translation>已发现</translation>
    </message>
    <message>
        <source>removed</source>
        <translation>已移除</translation>
    </message>
    <message>
        <source>auto-resume changed</source>
        <translation>自动恢复已更改</translation>
    </message>
    <message>
        <source>resume policy changed</source>
        <translation>恢复策略已更改</translation>
    </message>
    <message>
        <source>phone command refused</source>
        <translation>手机命令被拒绝</translation>
    </message>
    <message>
        <source>manual</source>
        <translation>手动</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>start-up</source>
        <translation>启动时</translation>
    </message>
    <message>
        <source>wake</source>
        <translation>唤醒后</translation>
    </message>
    <message>
        <source>window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>CLI</source>
        <translation>命令行</translation>
    </message>
    <message>
        <source>scheduler</source>
        <translation>调度器</translation>
    </message>
    <message>
        <source>tray</source>
        <translation>托盘</translation>
    </message>
    <message>
        <source>resume policy</source>
        <translation>恢复策略</translation>
    </message>
    <message>
        <source>phone</source>
        <translation>手机</translation>
    </message>
    <message>
        <source>{trigger} ({origin})</source>
        <translation>{trigger}（{origin}）</translation>
    </message>
    <message>
        <source>{window} {used} ({exactness})</source>
        <translation>{window} {used}（{exactness}）</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>All states</source>
        <translation>全部状态</translation>
    </message>
    <message>
        <source>Not finished</source>
        <translation>未结束</translation>
    </message>
    <message>
        <source>Running or resuming</source>
        <translation>运行中或恢复中</translation>
    </message>
    <message>
        <source>Waiting for quota</source>
        <translation>等待配额</translation>
    </message>
    <message>
        <source>Paused (any reason)</source>
        <translation>已暂停（任何原因）</translation>
    </message>
    <message>
        <source>Needs attention</source>
        <translation>需要处理</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Done or cancelled</source>
        <translation>已完成或已取消</translation>
    </message>
    <message>
        <source>the folder {path} does not exist</source>
        <extracomment>terminal emulators and the arguments that make them run a command</extracomment>
        <translation>文件夹 {path} 不存在</translation>
    </message>
    <message>
        <source>no application is set up to open {path}</source>
        <translation>没有设置用来打开 {path} 的应用</translation>
    </message>
    <message>
        <source>no terminal emulator found on PATH; set $TERMINAL to one, or run: {command}</source>
        <translation>PATH 中找不到终端模拟器；请把 $TERMINAL 设为一个终端，或者运行：{command}</translation>
    </message>
    <message>
        <source>could not start {program}</source>
        <translation>无法启动 {program}</translation>
    </message>
    <message>
        <source>could not start the demo</source>
        <translation>无法启动演示</translation>
    </message>
    <message>
        <source>Usage and history</source>
        <translation>用量与历史</translation>
    </message>
    <message>
        <source>&amp;Usage chart</source>
        <translation>用量图表(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;History</source>
        <translation>历史(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>Set &amp;up…</source>
        <translation>配置向导(&amp;U)…</translation>
    </message>
    <message>
        <source>What Goalkeeper found, and the choices that put it to work on your agents</source>
        <translation>Goalkeeper 找到了什么，以及让它为你的智能体工作的选项</translation>
    </message>
    <message>
        <source>&amp;Refresh providers</source>
        <translation>重新读取提供方(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Close window</source>
        <translation>关闭窗口(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>G&amp;oal</source>
        <translation>目标(&amp;O)</translation>
    </message>
    <message>
        <source>Start at the &amp;reset…</source>
        <translation>在重置时开始(&amp;R)…</translation>
    </message>
    <message>
        <source>Queue new work to start right after a quota window&apos;s next reset</source>
        <translation>排队新工作，在配额窗口下次重置后立即开始</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>查看(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Find goals</source>
        <translation>查找目标(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Goals</source>
        <translation>目标(&amp;G)</translation>
    </message>
    <message>
        <source>H&amp;osts…</source>
        <translation>宿主(&amp;O)…</translation>
    </message>
    <message>
        <source>Demo: {error}</source>
        <translation>演示：{error}</translation>
    </message>
    <message>
        <source>The demo opens in its own window, on a throw-away data directory.</source>
        <translation>演示会在单独的窗口中打开，使用一次性的数据目录。</translation>
    </message>
    <message>
        <source>Goal</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>{attempts} automatic resume attempts of {cap} in this episode</source>
        <translation>本轮自动恢复已尝试 {attempts} 次，上限 {cap} 次</translation>
    </message>
    <message>
        <source>{provider}, on host {host}: only that host runs, resumes or pauses it; what you do here is sent to it</source>
        <translation>{provider}，在宿主 {host} 上：只有该宿主运行、恢复或暂停它；你在这里的操作会发送给它</translation>
    </message>
    <message>
        <source>auto-resume on</source>
        <translation>自动恢复：开</translation>
    </message>
    <message>
        <source>{header}: {value}</source>
        <translation>{header}：{value}</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>Trigger</source>
        <translation>触发方式</translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Quota decided on</source>
        <translation>决策所依据的配额</translation>
    </message>
    <message>
        <source>Goalkeeper is still running</source>
        <translation>Goalkeeper 仍在运行</translation>
    </message>
    <message>
        <source>It keeps watching your goals from the tray icon. Choose Quit in the tray menu to stop it.</source>
        <translation>它会通过托盘图标继续关注你的目标。要停止它，请在托盘菜单中选择“退出”。</translation>
    </message>
    <message>
        <source>Goalkeeper — demo</source>
        <extracomment>open the set-up assistant at start when the config says it has not run (the app&apos;s bootstrap asks for it, never for the demo)</extracomment>
        <translation type="vanished">Goalkeeper — 演示</translation>
    </message>
    <message>
        <source>this app (pid {pid}) hosts {data_dir}</source>
        <extracomment>open the set-up assistant at start when the config says it has not run (the app&apos;s bootstrap asks for it, never for the demo)</extracomment>
        <translation>本应用（pid {pid}）托管 {data_dir}</translation>
    </message>
    <message>
        <source>Host not running: {reason}</source>
        <translation>宿主未运行：{reason}</translation>
    </message>
    <message>
        <source>Settings saved; scheduling changes apply when Goalkeeper next starts.</source>
        <translation>设置已保存；调度相关的改动在 Goalkeeper 下次启动时生效。</translation>
    </message>
    <message>
        <source>Settings saved and applied.</source>
        <translation>设置已保存并生效。</translation>
    </message>
    <message>
        <source>Start at login: {problem}</source>
        <translation>登录时启动：{problem}</translation>
    </message>
    <message>
        <source>Demo — Goalkeeper</source>
        <translation>演示 — Goalkeeper</translation>
    </message>
    <message>
        <source>Resuming</source>
        <extracomment>fields whose change the running app applies at once (the engine&apos;s are read at start-up)</extracomment>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Keep awake</source>
        <translation>保持唤醒</translation>
    </message>
    <message>
        <source>Resume policies</source>
        <translation>恢复策略</translation>
    </message>
    <message>
        <source>Quota thresholds</source>
        <translation>配额阈值</translation>
    </message>
    <message>
        <source>Scheduler</source>
        <translation>调度器</translation>
    </message>
    <message>
        <source>Notifications</source>
        <translation>通知</translation>
    </message>
    <message>
        <source>Desktop</source>
        <translation>桌面</translation>
    </message>
    <message>
        <source>e.g. {example} — 0: keep nothing back</source>
        <extracomment>a placeholder with an example (and what an empty or zero value means) per policy field: (template with {example}, the example — syntax, not words, so never translated)</extracomment>
        <translation>例如 {example} — 0：不预留</translation>
    </message>
    <message>
        <source>e.g. {example} — empty: the same for every window</source>
        <translation>例如 {example} — 留空：每个窗口相同</translation>
    </message>
    <message>
        <source>e.g. {example} — empty: this computer&apos;s zone</source>
        <translation>例如 {example} — 留空：本机的时区</translation>
    </message>
    <message>
        <source>e.g. {example} — 0: no limit</source>
        <translation>例如 {example} — 0：不限</translation>
    </message>
    <message>
        <source>e.g. {example} (5 minutes)</source>
        <translation>例如 {example}（5 分钟）</translation>
    </message>
    <message>
        <source>Providers</source>
        <translation>提供方</translation>
    </message>
    <message>
        <source>User quotas</source>
        <translation>用户配额</translation>
    </message>
    <message>
        <source>Codex</source>
        <extracomment>the titles of the providers&apos; own sections (named after their settings&apos; prefix)</extracomment>
        <translation>Codex</translation>
    </message>
    <message>
        <source>Claude</source>
        <translation>Claude</translation>
    </message>
    <message>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <source>Demo</source>
        <translation>演示</translation>
    </message>
    <message>
        <source>Keep the machine awake while a resume is due</source>
        <translation>有恢复到期时让机器保持唤醒</translation>
    </message>
    <message>
        <source>For a resume due within (h)</source>
        <translation>对于在此时间内到期的恢复（小时）</translation>
    </message>
    <message>
        <source>Let it sleep on battery below (%)</source>
        <translation>使用电池且电量低于此值时允许睡眠（%）</translation>
    </message>
    <message>
        <source>A goal was resumed automatically</source>
        <translation>目标被自动恢复</translation>
    </message>
    <message>
        <source>A goal ran out of quota again soon after a resume</source>
        <translation>目标恢复后不久配额再次用完</translation>
    </message>
    <message>
        <source>Goalkeeper gave up at the attempt cap</source>
        <translation>Goalkeeper 在达到尝试上限后放弃</translation>
    </message>
    <message>
        <source>An automatic resume was scheduled</source>
        <translation>已安排一次自动恢复</translation>
    </message>
    <message>
        <source>A goal is done</source>
        <translation>目标已完成</translation>
    </message>
    <message>
        <source>A goal failed or could not be resumed</source>
        <translation>目标失败或无法恢复</translation>
    </message>
    <message>
        <source>A goal stopped on a problem and needs you</source>
        <translation>目标因问题停下，需要你处理</translation>
    </message>
    <message>
        <source>A pipeline run finished</source>
        <translation>流水线的一次运行结束</translation>
    </message>
    <message>
        <source>Set up Goalkeeper</source>
        <translation>Goalkeeper 配置向导</translation>
    </message>
    <message>
        <source>ntfy topic URL</source>
        <translation>ntfy 主题 URL</translation>
    </message>
    <message>
        <source>&amp;Not now</source>
        <translation>以后再说(&amp;N)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Choose what Goalkeeper may do.&lt;/b&gt; Nothing changes unless you tick it; auto-resume stays off until you turn it on.</source>
        <translation>&lt;b&gt;选择 Goalkeeper 可以做什么。&lt;/b&gt;不勾选就不会有任何改动；在你开启之前，自动恢复保持关闭。</translation>
    </message>
    <message>
        <source>{choice} (already on)</source>
        <translation>{choice}（已开启）</translation>
    </message>
    <message>
        <source>&amp;Close</source>
        <translation>关闭(&amp;C)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Codex&lt;/b&gt; in {dir}: {n} goals</source>
        <translation>&lt;b&gt;Codex&lt;/b&gt;（{dir}）：{n} 个目标</translation>
    </message>
    <message>
        <source>&lt;b&gt;Codex&lt;/b&gt;: not found (looked in {dir})</source>
        <translation>&lt;b&gt;Codex&lt;/b&gt;：未找到（查找了 {dir}）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Claude Code&lt;/b&gt; in {dirs}: {n} sessions</source>
        <translation>&lt;b&gt;Claude Code&lt;/b&gt;（{dirs}）：{n} 个会话</translation>
    </message>
    <message>
        <source>&lt;b&gt;Claude Code&lt;/b&gt;: not found (looked in {dirs})</source>
        <translation>&lt;b&gt;Claude Code&lt;/b&gt;：未找到（查找了 {dirs}）</translation>
    </message>
    <message>
        <source>&lt;b&gt;{provider} quota&lt;/b&gt;: {how}</source>
        <translation>&lt;b&gt;{provider} 配额&lt;/b&gt;：{how}</translation>
    </message>
    <message>
        <source>&lt;h2&gt;Set up Goalkeeper&lt;/h2&gt;Goalkeeper found:</source>
        <translation>&lt;h2&gt;Goalkeeper 配置向导&lt;/h2&gt;Goalkeeper 找到了：</translation>
    </message>
    <message>
        <source>Nothing changed. Goalkeeper → Set up… opens this again any time.</source>
        <translation>没有任何改动。随时可通过 Goalkeeper → 配置向导… 再次打开。</translation>
    </message>
    <message>
        <source>ntfy: least urgent kind</source>
        <translation>ntfy：最低紧急程度</translation>
    </message>
    <message>
        <source>Webhook URL</source>
        <translation>Webhook URL</translation>
    </message>
    <message>
        <source>Webhook: least urgent kind</source>
        <translation>Webhook：最低紧急程度</translation>
    </message>
    <message>
        <source>Delivery time-out (s)</source>
        <translation>发送超时（秒）</translation>
    </message>
    <message>
        <source>Answer from the phone (buttons on notifications)</source>
        <translation>从手机答复（通知上的按钮）</translation>
    </message>
    <message>
        <source>What the phone may do</source>
        <translation>手机可以执行的操作</translation>
    </message>
    <message>
        <source>Buttons work for (min)</source>
        <translation>按钮有效时长（分钟）</translation>
    </message>
    <message>
        <source>ntfy server of the command topic</source>
        <translation>命令主题所在的 ntfy 服务器</translation>
    </message>
    <message>
        <source>Auto-resume newly found goals</source>
        <translation>对新发现的目标自动恢复</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Start Goalkeeper when I log in</source>
        <translation>登录时启动 Goalkeeper</translation>
    </message>
    <message>
        <source>The set-up assistant has run</source>
        <translation>配置向导已运行过</translation>
    </message>
    <message>
        <source>Include the demo provider</source>
        <translation>包含演示提供方</translation>
    </message>
    <message>
        <source>Quotas you defined</source>
        <translation>你定义的配额</translation>
    </message>
    <message>
        <source>Margin after a reset (s)</source>
        <translation>重置后再等待（秒）</translation>
    </message>
    <message>
        <source>Random extra delay, up to (s)</source>
        <translation>随机附加延迟，最多（秒）</translation>
    </message>
    <message>
        <source>Longest wait to schedule (h)</source>
        <translation>可安排的最长等待（小时）</translation>
    </message>
    <message>
        <source>Automatic attempts per quota episode</source>
        <translation>每轮配额周期的自动尝试次数</translation>
    </message>
    <message>
        <source>Re-limit window (s)</source>
        <translation>再次受限的判定时间窗口（秒）</translation>
    </message>
    <message>
        <source>Retry after a failed start (s)</source>
        <translation>启动失败后重试的间隔（秒）</translation>
    </message>
    <message>
        <source>Agent start timeout (s)</source>
        <translation>代理启动超时（秒）</translation>
    </message>
    <message>
        <source>Quota re-check timeout (s)</source>
        <translation>配额复查超时（秒）</translation>
    </message>
    <message>
        <source>Exhausted at (% used)</source>
        <translation>判定耗尽的用量（%）</translation>
    </message>
    <message>
        <source>Recovered at or below (% used)</source>
        <translation>判定重新可用的用量上限（%）</translation>
    </message>
    <message>
        <source>Stays recovered for (s)</source>
        <translation>保持重新可用的时长（秒）</translation>
    </message>
    <message>
        <source>Readings are stale after (s)</source>
        <translation>读数过时的时限（秒）</translation>
    </message>
    <message>
        <source>Scheduler&apos;s longest sleep while waiting (s)</source>
        <translation>等待时调度器的最长休眠（秒）</translation>
    </message>
    <message>
        <source>Fallback poll, shortest interval (s)</source>
        <translation>兜底轮询的最短间隔（秒）</translation>
    </message>
    <message>
        <source>Fallback poll, longest interval (s)</source>
        <translation>兜底轮询的最长间隔（秒）</translation>
    </message>
    <message>
        <source>Fallback poll jitter (fraction)</source>
        <translation>兜底轮询的随机抖动（比例）</translation>
    </message>
    <message>
        <source>Provider refresh interval (s)</source>
        <translation>提供方刷新间隔（秒）</translation>
    </message>
    <message>
        <source>Host heartbeat interval (s)</source>
        <translation>宿主心跳间隔（秒）</translation>
    </message>
    <message>
        <source>Replace a silent host after (s)</source>
        <translation>宿主静默多久后接替（秒）</translation>
    </message>
    <message>
        <source>Host answer time-out (s)</source>
        <translation>宿主应答超时（秒）</translation>
    </message>
    <message>
        <source>Keep for me, every window (%)</source>
        <translation>每个窗口为我预留（%）</translation>
    </message>
    <message>
        <source>Keep for me, per window</source>
        <translation>按窗口为我预留</translation>
    </message>
    <message>
        <source>Automatic resumes only at</source>
        <translation>只在这些时段自动恢复</translation>
    </message>
    <message>
        <source>Time zone of those hours</source>
        <translation>这些时段的时区</translation>
    </message>
    <message>
        <source>Automatic resumes at once, per window</source>
        <translation>每个窗口同时自动恢复的数量</translation>
    </message>
    <message>
        <source>Next resume after (s)</source>
        <translation>恢复一个目标后，隔多久再恢复下一个（秒）</translation>
    </message>
    <message>
        <source>Shared store (postgresql://…)</source>
        <translation>共享存储（postgresql://…）</translation>
    </message>
    <message>
        <source>This host&apos;s name</source>
        <translation>本宿主的名称</translation>
    </message>
    <message>
        <source>Subscription account name</source>
        <translation>订阅账户名称</translation>
    </message>
    <message>
        <source>Codex account name</source>
        <translation>Codex 账户名称</translation>
    </message>
    <message>
        <source>Claude account name</source>
        <translation>Claude 账户名称</translation>
    </message>
    <message>
        <source>Follow Codex</source>
        <translation>关注 Codex</translation>
    </message>
    <message>
        <source>Auto-resume newly found Codex goals</source>
        <translation>自动恢复新找到的 Codex 目标</translation>
    </message>
    <message>
        <source>Codex home</source>
        <translation>Codex 主目录</translation>
    </message>
    <message>
        <source>Codex executable</source>
        <translation>Codex 可执行文件</translation>
    </message>
    <message>
        <source>Prompt of the exec fallback</source>
        <translation>exec 兜底方式的提示词</translation>
    </message>
    <message>
        <source>App-server quota read timeout (s)</source>
        <translation>app-server 读取配额的超时（秒）</translation>
    </message>
    <message>
        <source>Wait for Codex to confirm a resume (s)</source>
        <translation>等待 Codex 确认恢复的时长（秒）</translation>
    </message>
    <message>
        <source>Wait for the last turn to end (s)</source>
        <translation>等待最后一轮结束（秒）</translation>
    </message>
    <message>
        <source>Watch Claude Code</source>
        <translation>关注 Claude Code</translation>
    </message>
    <message>
        <source>Auto-resume newly found Claude Code sessions</source>
        <translation>自动恢复新找到的 Claude Code 会话</translation>
    </message>
    <message>
        <source>Claude config directories</source>
        <translation>Claude 配置目录</translation>
    </message>
    <message>
        <source>Claude executable</source>
        <translation>Claude 可执行文件</translation>
    </message>
    <message>
        <source>Prompt of a headless resume</source>
        <translation>无界面恢复时的提示词</translation>
    </message>
    <message>
        <source>Track sessions a limit stopped</source>
        <translation>跟踪因上限而停止的会话</translation>
    </message>
    <message>
        <source>…if stopped within (h)</source>
        <translation>…且在多久之内停止（小时）</translation>
    </message>
    <message>
        <source>Time zone of limit messages</source>
        <translation>上限消息所用的时区</translation>
    </message>
    <message>
        <source>Transcript check interval (s)</source>
        <translation>检查会话记录的间隔（秒）</translation>
    </message>
    <message>
        <source>Processes for the first scan</source>
        <translation>首次扫描所用的进程数</translation>
    </message>
    <message>
        <source>Stop grace before SIGTERM (s)</source>
        <translation>发送 SIGTERM 之前的宽限（秒）</translation>
    </message>
    <message>
        <source>Wait for the turn to end on a policy pause (s)</source>
        <translation>策略暂停时等待这一轮结束（秒）</translation>
    </message>
    <message>
        <source>Turns tried on transient 429s</source>
        <translation>遇到临时 429 时尝试的轮数</translation>
    </message>
    <message>
        <source>First backoff after a transient 429 (s)</source>
        <translation>临时 429 后的首次退避（秒）</translation>
    </message>
    <message>
        <source>Run pipeline goals</source>
        <translation>运行流水线目标</translation>
    </message>
    <message>
        <source>Step stop grace before SIGKILL (s)</source>
        <translation>步骤在 SIGKILL 之前的宽限（秒）</translation>
    </message>
    <message>
        <source>Longest rate-limit wait in process (s)</source>
        <translation>进程内等待速率限制的最长时间（秒）</translation>
    </message>
    <message>
        <source>Holds a sleep inhibitor (logind on Linux) while an automatic resume is due, and lets go when nothing is. A lid switch that suspends anyway is shown as a note.</source>
        <extracomment>what each field means (the README&apos;s settings table), for tooltips and screen readers; a field without an entry shows its ``description`` (from the core&apos;s catalogue)</extracomment>
        <translation>在自动恢复到期期间持有睡眠抑制锁（Linux 上为 logind），没有到期的恢复时即释放。合盖时仍会挂起的设置会以提示显示。</translation>
    </message>
    <message>
        <source>A resume due later than this lets the machine sleep until it comes within it; shown by `goalkeeper status`.</source>
        <translation>更晚到期的恢复在进入此时间范围之前允许机器睡眠；`goalkeeper status` 会显示。</translation>
    </message>
    <message>
        <source>0: hold on any charge.</source>
        <translation>0：任何电量下都保持。</translation>
    </message>
    <message>
        <source>Added to the reset instant before resuming.</source>
        <translation>恢复前在重置时刻之上额外等待的时间。</translation>
    </message>
    <message>
        <source>A random 0–N s on top, so goals do not stampede.</source>
        <translation>再加上随机的 0–N 秒，避免多个目标同时涌入。</translation>
    </message>
    <message>
        <source>Resets further away are shown, not scheduled.</source>
        <translation>更远的重置只显示，不安排自动恢复。</translation>
    </message>
    <message>
        <source>Automatic resumes per quota episode before giving up.</source>
        <translation>每轮配额周期内放弃之前的自动恢复次数。</translation>
    </message>
    <message>
        <source>A new limit this soon after an automatic resume counts as a failed attempt.</source>
        <translation>自动恢复后这么短的时间内再次受限，算作一次失败的尝试。</translation>
    </message>
    <message>
        <source>Wait before retrying when the agent could not be started.</source>
        <translation>代理无法启动时，重试之前的等待时间。</translation>
    </message>
    <message>
        <source>Time-box for starting an agent.</source>
        <translation>启动代理的时限。</translation>
    </message>
    <message>
        <source>Backstop time-box for the fresh quota read taken right before an automatic resume.</source>
        <translation>自动恢复前重新读取配额的兜底时限。</translation>
    </message>
    <message>
        <source>Used % at which a window is exhausted.</source>
        <translation>窗口被判定为耗尽时的用量百分比。</translation>
    </message>
    <message>
        <source>Used % at or below which it may count as recovered.</source>
        <translation>用量百分比降到此值或以下时，才可能判定为重新可用。</translation>
    </message>
    <message>
        <source>How long it must stay recovered before goals are resumed.</source>
        <translation>必须保持重新可用多久，才会恢复目标。</translation>
    </message>
    <message>
        <source>Readings older than this are marked stale.</source>
        <translation>超过这个时长的读数会被标记为过时。</translation>
    </message>
    <message>
        <source>The scheduler&apos;s longest sleep while something is pending.</source>
        <translation>有待办事项时调度器的最长休眠时间。</translation>
    </message>
    <message>
        <source>Shortest interval of the fallback quota poll.</source>
        <translation>兜底配额轮询的最短间隔。</translation>
    </message>
    <message>
        <source>Longest interval of the fallback quota poll.</source>
        <translation>兜底配额轮询的最长间隔。</translation>
    </message>
    <message>
        <source>Random spread of the fallback poll interval (0–1).</source>
        <translation>兜底轮询间隔的随机浮动幅度（0–1）。</translation>
    </message>
    <message>
        <source>How often providers are asked for goals and quotas.</source>
        <translation>多久向提供方询问一次目标和配额。</translation>
    </message>
    <message>
        <source>How often the host writes that it is alive.</source>
        <translation>宿主多久写一次自己还活着。</translation>
    </message>
    <message>
        <source>A host silent this long that does not answer may be replaced; its writes are fenced off.</source>
        <translation>静默这么久且不应答的宿主可以被接替；它的写入会被隔离。</translation>
    </message>
    <message>
        <source>How long commands wait before saying the host is not responding.</source>
        <translation>命令等多久后才报告宿主无响应。</translation>
    </message>
    <message>
        <source>An automatic resume needs more than this share of the window left, and a goal Goalkeeper resumed is paused when only this much is left (until the window resets). 0 = off. Manual resumes ignore it.</source>
        <translation>自动恢复要求窗口剩余多于这个比例；由 Goalkeeper 恢复的目标在只剩这么多时暂停（直到窗口重置）。0 = 关闭。手动恢复不受它限制。</translation>
    </message>
    <message>
        <source>Per-window reserves replacing the one above, e.g. codex:5h=30, claude:7d=10.</source>
        <translation>按窗口设置的预留，替代上面那一项，例如 codex:5h=30, claude:7d=10。</translation>
    </message>
    <message>
        <source>Weekly ranges in which automatic resumes may start, e.g. Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00 (a range ending before it starts runs past midnight; &apos;except …&apos; for quiet hours). Empty: any time. A goal&apos;s own hours replace these; manual resumes are always allowed.</source>
        <translation>每周中允许开始自动恢复的时段，例如 Mon-Fri 19:00-08:00, Sat-Sun 00:00-24:00（结束早于开始的时段会跨过午夜；&apos;except …&apos; 用来写安静时段）。留空：任何时间。目标自己的时段会替代这些；手动恢复总是允许的。</translation>
    </message>
    <message>
        <source>IANA name such as Europe/Berlin; empty: the system&apos;s zone.</source>
        <translation>IANA 名称，例如 Europe/Berlin；留空：系统时区。</translation>
    </message>
    <message>
        <source>Goals waiting on one window resume in priority order, this many at a time (0 = all at once).</source>
        <translation>等待同一个窗口的目标按优先级恢复，每次这么多个（0 = 全部同时）。</translation>
    </message>
    <message>
        <source>The next waiting goal starts when a resumed one stops, or after it has run this long.</source>
        <translation>已恢复的目标停下，或运行了这么久之后，下一个等待中的目标才开始。</translation>
    </message>
    <message>
        <source>Show the built-in demo goals in this data directory too.</source>
        <translation>在这个数据目录中也显示内置的演示目标。</translation>
    </message>
    <message>
        <source>Empty: this machine&apos;s own database. A postgresql:// URL: one database every host of yours shares (no password here: `goalkeeper secret set store-password`, ~/.pgpass or a service file). Takes effect when the host restarts.</source>
        <translation>留空：使用本机自己的数据库。postgresql:// URL：你所有宿主共用的一个数据库（这里不写密码：用 `goalkeeper secret set store-password`、~/.pgpass 或服务文件）。宿主重启后生效。</translation>
    </message>
    <message>
        <source>Notifications about a goal that waits (a resume scheduled, gave up, needs attention) get buttons. A tap publishes a signed command to this computer&apos;s private command topic, which the host subscribes to (no port is opened). Off by default.</source>
        <translation>关于等待中目标的通知（已安排恢复、已放弃、需要处理）会带有按钮。点按后，一条签名命令会发布到本机的私有命令主题，宿主订阅该主题（不开放任何端口）。默认关闭。</translation>
    </message>
    <message>
        <source>Comma-separated: resume (Resume now), skip (Skip this window), keep-paused (Keep paused).</source>
        <translation>以逗号分隔：resume（立即恢复）、skip（跳过本窗口）、keep-paused（保持暂停）。</translation>
    </message>
    <message>
        <source>A button&apos;s command is refused after this long.</source>
        <translation>超过此时长后，按钮的命令将被拒绝。</translation>
    </message>
    <message>
        <source>Empty: the server of the ntfy topic URL above.</source>
        <translation>留空：使用上面 ntfy 主题 URL 所在的服务器。</translation>
    </message>
    <message>
        <source>Codex goals found from now on start with auto-resume on (off by default; the set-up assistant offers it).</source>
        <translation>此后找到的 Codex 目标默认开启自动恢复（默认关闭；配置向导会提供此选项）。</translation>
    </message>
    <message>
        <source>When Codex completed or limited the goal, or the reserve or a budget paused it: how long Goalkeeper waits for the turn in progress to end before it lets the app-server go (a paused goal&apos;s turn is interrupted then).</source>
        <translation>Codex 完成了目标或目标达到上限时，或者预留或预算暂停了目标时：Goalkeeper 等待进行中的这一轮结束多久，然后才放开 app-server（被暂停的目标的这一轮此时会被中断）。</translation>
    </message>
    <message>
        <source>Claude Code sessions found from now on start with auto-resume on (off by default; the set-up assistant offers it).</source>
        <translation>此后找到的 Claude Code 会话默认开启自动恢复（默认关闭；配置向导会提供此选项）。</translation>
    </message>
    <message>
        <source>Off: the app opens the set-up assistant at its next start (Goalkeeper → Set up… opens it any time).</source>
        <translation>关闭：应用下次启动时打开配置向导（随时可通过 Goalkeeper → 配置向导… 打开）。</translation>
    </message>
    <message>
        <source>Empty: this machine&apos;s own database. A postgresql:// URL: one database every host of yours shares (no password here: goalkeeper secret set store-password, ~/.pgpass or a service file). Takes effect when the host restarts.</source>
        <translation type="vanished">留空：使用本机自己的数据库。postgresql:// URL：你所有宿主共用的一个数据库（这里不写密码：用 goalkeeper secret set store-password、~/.pgpass 或服务文件）。宿主重启后生效。</translation>
    </message>
    <message>
        <source>How this machine is named in the shared store; empty: the machine&apos;s name.</source>
        <translation>本机在共享存储中的名称；留空：使用机器名。</translation>
    </message>
    <message>
        <source>Hosts naming the same account share its quota readings.</source>
        <translation>填写同一账户的宿主共享该账户的配额读数。</translation>
    </message>
    <message>
        <source>Codex&apos;s account, when it differs from the subscription account name; empty: what Codex itself says, else that name.</source>
        <translation>Codex 的账户（与订阅账户名称不同时）；留空：使用 Codex 自己报告的账户，否则使用订阅账户名称。</translation>
    </message>
    <message>
        <source>Claude&apos;s account, when it differs from the subscription account name.</source>
        <translation>Claude 的账户（与订阅账户名称不同时）。</translation>
    </message>
    <message>
        <source>The language of the window and the goalkeeper command. “System language” follows LANGUAGE, LC_ALL, LC_MESSAGES and LANG; English where nothing else fits. Applies at the next start.</source>
        <translation>窗口和 goalkeeper 命令所用的语言。“系统语言”会依次参考 LANGUAGE、LC_ALL、LC_MESSAGES 和 LANG；都不适用时使用英语。下次启动时生效。</translation>
    </message>
    <message>
        <source>Adds Goalkeeper to your desktop&apos;s autostart (XDG autostart on Linux).</source>
        <translation>把 Goalkeeper 加入桌面的自动启动（Linux 上为 XDG autostart）。</translation>
    </message>
    <message>
        <source>A run Goalkeeper started stopped on a sign-in problem or an error (a blocked pipeline run, an agent that exited): it is not resumed automatically until you look at it.</source>
        <translation>Goalkeeper 启动的运行因登录问题或错误而停下（受阻的流水线运行、退出的代理）：在你处理之前，它不会被自动恢复。</translation>
    </message>
    <message>
        <source>A pipeline goal finished a run and waits for its next one. A pipeline that runs often says so each time.</source>
        <translation>流水线目标完成了一次运行，正在等待下一次。运行频繁的流水线每次都会通知。</translation>
    </message>
    <message>
        <source>Push to your phone through ntfy (public or self-hosted), e.g. https://ntfy.sh/my-goals-7f3a. The topic is like a password: pick one that is hard to guess. A token, if the server needs one, goes into the keyring: goalkeeper secret set ntfy-token.</source>
        <translation>通过 ntfy（公共或自建）推送到手机，例如 https://ntfy.sh/my-goals-7f3a。主题相当于密码：请选一个难以猜到的。如果服务器需要令牌，请把它存入密钥环：goalkeeper secret set ntfy-token。</translation>
    </message>
    <message>
        <source>The least urgent kind ntfy gets; the kinds after it in the list are more urgent and are sent too.</source>
        <translation>ntfy 接收的最低紧急程度；列表中排在它之后的类型更紧急，也会发送。</translation>
    </message>
    <message>
        <source>Each notification is POSTed here as JSON (`kind`, `goal`, `title`, `provider`, `host`, `at`, `message`, `next_resume_at`). With a secret in the keyring (goalkeeper secret set webhook-secret) the body is signed (X-Goalkeeper-Signature).</source>
        <translation>每条通知都会以 JSON 形式 POST 到这里（`kind`、`goal`、`title`、`provider`、`host`、`at`、`message`、`next_resume_at`）。如果密钥环中有密钥（goalkeeper secret set webhook-secret），请求体会被签名（X-Goalkeeper-Signature）。</translation>
    </message>
    <message>
        <source>The least urgent kind the webhook gets; the kinds after it in the list are more urgent and are sent too.</source>
        <translation>Webhook 接收的最低紧急程度；列表中排在它之后的类型更紧急，也会发送。</translation>
    </message>
    <message>
        <source>How long one attempt to reach ntfy or the webhook may take (failed attempts are retried with backoff).</source>
        <translation>一次发送到 ntfy 或 Webhook 的尝试最多可用多久（失败的尝试会退避重试）。</translation>
    </message>
    <message>
        <source>Newly found goals start with auto-resume on (it is off by default: resuming is opt-in).</source>
        <translation>新发现的目标一开始就开启自动恢复（默认关闭：自动恢复需要你主动选择）。</translation>
    </message>
    <message>
        <source>Follow Codex whenever its home exists.</source>
        <translation>只要 Codex 主目录存在，就关注 Codex。</translation>
    </message>
    <message>
        <source>Codex&apos;s home; empty: $CODEX_HOME, else ~/.codex.</source>
        <translation>Codex 主目录；留空：使用 $CODEX_HOME，否则为 ~/.codex。</translation>
    </message>
    <message>
        <source>The codex executable; empty: codex on PATH.</source>
        <translation>codex 可执行文件；留空：使用 PATH 中的 codex。</translation>
    </message>
    <message>
        <source>The prompt of the `codex exec resume` fallback.</source>
        <translation>`codex exec resume` 兜底方式所用的提示词。</translation>
    </message>
    <message>
        <source>Time-box of a quota read through `codex app-server`.</source>
        <translation>通过 `codex app-server` 读取配额的时限。</translation>
    </message>
    <message>
        <source>How long a resume waits for Codex to confirm the goal is active again.</source>
        <translation>恢复时等待 Codex 确认目标重新进入活动状态的时长。</translation>
    </message>
    <message>
        <source>When Codex completed or limited the goal: how long Goalkeeper waits for the turn in progress to end before it lets the app-server go.</source>
        <translation type="vanished">Codex 完成了目标或目标达到上限时：Goalkeeper 等待进行中的这一轮结束多久，然后才放开 app-server。</translation>
    </message>
    <message>
        <source>Watch Claude Code sessions (only when a Claude config directory exists).</source>
        <translation>关注 Claude Code 会话（仅当存在 Claude 配置目录时）。</translation>
    </message>
    <message>
        <source>Comma-separated; empty: $CLAUDE_CONFIG_DIR (may list several), else ~/.claude and ~/.config/claude.</source>
        <translation>用逗号分隔；留空：使用 $CLAUDE_CONFIG_DIR（可以列出多个），否则为 ~/.claude 和 ~/.config/claude。</translation>
    </message>
    <message>
        <source>The claude executable; empty: claude on PATH.</source>
        <translation>claude 可执行文件；留空：使用 PATH 中的 claude。</translation>
    </message>
    <message>
        <source>The prompt of a headless resume (must not start with -).</source>
        <translation>无界面恢复所用的提示词（不能以 - 开头）。</translation>
    </message>
    <message>
        <source>A session a usage limit stopped becomes a goal by itself.</source>
        <translation>因用量上限而停止的会话会自动成为一个目标。</translation>
    </message>
    <message>
        <source>…if the stop is at most this old, or its reset is still ahead.</source>
        <translation>…前提是停止发生在这么久之内，或者它的重置时间还没到。</translation>
    </message>
    <message>
        <source>IANA zone for limit messages that name none; empty: $TZ, else the system&apos;s.</source>
        <translation>用于未注明时区的上限消息的 IANA 时区；留空：使用 $TZ，否则为系统时区。</translation>
    </message>
    <message>
        <source>How often transcripts are checked for appended lines.</source>
        <translation>多久检查一次会话记录中新追加的行。</translation>
    </message>
    <message>
        <source>Processes for the first scan of a history over 64 MiB; 0: one per CPU, at most 4.</source>
        <translation>首次扫描超过 64 MiB 的历史记录时所用的进程数；0：每个 CPU 一个，最多 4 个。</translation>
    </message>
    <message>
        <source>Pause or cancel of a headless run: SIGINT, this long, then SIGTERM.</source>
        <translation>暂停或取消无界面运行时：先发送 SIGINT，等待这么久，再发送 SIGTERM。</translation>
    </message>
    <message>
        <source>When the reserve or a budget pauses a headless run: how long its turn in progress may take to end by itself before it is stopped like a pause.</source>
        <translation>预留或预算暂停无界面运行时：进行中的这一轮可以用多久自行结束，超时后像暂停一样将其停止。</translation>
    </message>
    <message>
        <source>Headless turns tried when each ends on a transient 429 (a rate limit that is not your usage limit).</source>
        <translation>每一轮都因临时 429（不是你的用量上限的限流）结束时，尝试的无界面轮数。</translation>
    </message>
    <message>
        <source>First backoff cap after a transient 429; it doubles, up to 15 min.</source>
        <translation>临时 429 后的首次退避上限；之后逐次加倍，最多 15 分钟。</translation>
    </message>
    <message>
        <source>Run pipeline goals added with `goalkeeper add`.</source>
        <translation>运行用 `goalkeeper add` 添加的流水线目标。</translation>
    </message>
    <message>
        <source>When a step is stopped: SIGTERM, then SIGKILL after this.</source>
        <translation>停止一个步骤时：先发送 SIGTERM，过了这么久再发送 SIGKILL。</translation>
    </message>
    <message>
        <source>A rate limit whose Retry-After is at most this is waited in process; a longer one pauses the goal for quota.</source>
        <translation>Retry-After 不超过此值的速率限制会在进程内等待；更长的则会让目标因配额而暂停。</translation>
    </message>
    <message>
        <source>A resume was scheduled (everything)</source>
        <extracomment>how a choice is shown (value → text); values without an entry are shown as they are</extracomment>
        <translation>已安排恢复（全部）</translation>
    </message>
    <message>
        <source>Resumed automatically</source>
        <translation>已自动恢复</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Ran out of quota again</source>
        <translation>配额再次用完</translation>
    </message>
    <message>
        <source>Could not resume</source>
        <translation>无法恢复</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Gave up at the attempt cap</source>
        <translation>达到尝试上限后放弃</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>系统语言</translation>
    </message>
    <message>
        <source>nothing running</source>
        <translation>没有在运行的目标</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>waiting for quota</source>
        <translation>等待配额</translation>
    </message>
    <message>
        <source>needs attention</source>
        <translation>需要处理</translation>
    </message>
    <message>
        <source>{n} running</source>
        <translation>{n} 个运行中</translation>
    </message>
    <message>
        <source>{n} waiting for quota</source>
        <translation>{n} 个等待配额</translation>
    </message>
    <message>
        <source>{n} waiting for quota (next resume {when})</source>
        <translation>{n} 个等待配额（下次恢复 {when}）</translation>
    </message>
    <message>
        <source>{n} needs attention</source>
        <translation>{n} 个需要处理</translation>
    </message>
    <message>
        <source>{n} need attention</source>
        <translation>{n} 个需要处理</translation>
    </message>
    <message>
        <source>nothing running ({n} goals)</source>
        <translation>没有在运行的目标（共 {n} 个目标）</translation>
    </message>
    <message>
        <source>no goals yet</source>
        <translation>还没有目标</translation>
    </message>
    <message>
        <source>Goalkeeper — {summary}</source>
        <translation>Goalkeeper — {summary}</translation>
    </message>
    <message>
        <source>Pause all: nothing to pause</source>
        <translation>全部暂停：没有可暂停的目标</translation>
    </message>
    <message>
        <source>{n} {outcome}</source>
        <translation>{outcome} {n} 个</translation>
    </message>
    <message>
        <source>Pause all: {counts}</source>
        <translation>全部暂停：{counts}</translation>
    </message>
    <message>
        <source>, </source>
        <comment>list separator</comment>
        <translation>，</translation>
    </message>
    <message>
        <source>Goalkeeper tray menu</source>
        <translation>Goalkeeper 托盘菜单</translation>
    </message>
    <message>
        <source>&amp;Show Goalkeeper</source>
        <translation>显示 Goalkeeper(&amp;S)</translation>
    </message>
    <message>
        <source>Waiting for quota ({n})</source>
        <translation>等待配额（{n}）</translation>
    </message>
    <message>
        <source>Nothing is waiting for quota</source>
        <translation>没有等待配额的目标</translation>
    </message>
    <message>
        <source>&amp;Pause all ({n})</source>
        <translation>全部暂停(&amp;P)（{n}）</translation>
    </message>
    <message>
        <source>&amp;Quit Goalkeeper</source>
        <translation>退出 Goalkeeper(&amp;Q)</translation>
    </message>
    <message>
        <source>{title} — resumes {when}</source>
        <translation>{title} — {when}恢复</translation>
    </message>
    <message>
        <source>{title} — resumes {countdown}</source>
        <translation>{title} — {countdown}恢复</translation>
    </message>
    <message>
        <source>no automatic resume</source>
        <translation>没有自动恢复</translation>
    </message>
    <message>
        <source>{title} — {note}</source>
        <translation>{title} — {note}</translation>
    </message>
    <message>
        <source>Last action result</source>
        <translation>上次操作的结果</translation>
    </message>
    <message>
        <source>Dismiss message</source>
        <translation>关闭消息</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Since the first reading (up to 7 days)</source>
        <extracomment>(label, look-back); None: from the first stored reading within a week</extracomment>
        <translation>自第一条读数起（最多 7 天）</translation>
    </message>
    <message>
        <source>Last hour</source>
        <translation>最近 1 小时</translation>
    </message>
    <message>
        <source>Last 24 hours</source>
        <translation>最近 24 小时</translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation>最近 7 天</translation>
    </message>
    <message>
        <source>Quota window to chart</source>
        <translation>要绘制的配额窗口</translation>
    </message>
    <message>
        <source>Period to chart</source>
        <translation>要绘制的时间段</translation>
    </message>
    <message>
        <source>&amp;Window:</source>
        <translation>窗口(&amp;W)：</translation>
    </message>
    <message>
        <source>&lt;b&gt;Watch a job of your own:&lt;/b&gt; describe it in a pipeline goal file (a TOML file with its sources and stages — see “Pipeline goals” in the README) and run &lt;code&gt;goalkeeper add my-job.toml&lt;/code&gt;. Codex goals and Claude Code sessions show up here by themselves once Goalkeeper finds them.</source>
        <translation type="vanished">&lt;b&gt;关注你自己的任务：&lt;/b&gt;在流水线目标文件中描述它（一个列出其数据源和阶段的 TOML 文件 — 参见 README 中的“Pipeline goals”），然后运行 &lt;code&gt;goalkeeper add my-job.toml&lt;/code&gt;。Codex 目标和 Claude Code 会话一旦被 Goalkeeper 找到，就会自动出现在这里。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Watch a job of your own:&lt;/b&gt; describe it in a pipeline goal file (a TOML file with its sources and stages — see “Pipeline goals” in the user guide, docs/user-guide.md) and run &lt;code&gt;goalkeeper add my-job.toml&lt;/code&gt;. Codex goals and Claude Code sessions show up here by themselves once Goalkeeper finds them.</source>
        <translation>&lt;b&gt;关注你自己的任务：&lt;/b&gt;在流水线目标文件中描述它（一个列出其数据源和阶段的 TOML 文件 — 参见用户指南 docs/user-guide.md 中的“Pipeline goals”），然后运行 &lt;code&gt;goalkeeper add my-job.toml&lt;/code&gt;。Codex 目标和 Claude Code 会话一旦被 Goalkeeper 找到，就会自动出现在这里。</translation>
    </message>
    <message>
        <source>Getting started</source>
        <translation>开始使用</translation>
    </message>
    <message>
        <source>&lt;h2&gt;Nothing to watch yet&lt;/h2&gt;</source>
        <translation>&lt;h2&gt;还没有可以关注的内容&lt;/h2&gt;</translation>
    </message>
    <message>
        <source>Where Goalkeeper looked</source>
        <translation>Goalkeeper 查找过的位置</translation>
    </message>
    <message>
        <source>Try the &amp;demo</source>
        <translation>试试演示(&amp;D)</translation>
    </message>
    <message>
        <source>Opens a separate Goalkeeper window on a throw-away data directory: three simulated goals run out of a one-minute quota and are resumed automatically. Your data is untouched.</source>
        <translation>在一次性的数据目录上打开一个独立的 Goalkeeper 窗口：三个模拟目标会用完一分钟的配额，然后被自动恢复。你的数据不受影响。</translation>
    </message>
    <message>
        <source>&amp;Look again</source>
        <translation>重新查找(&amp;L)</translation>
    </message>
    <message>
        <source>Goalkeeper looked for goals and quota windows here:</source>
        <translation>Goalkeeper 在这些位置查找了目标和配额窗口：</translation>
    </message>
    <message>
        <source>Filter goals by title, id, provider or reason</source>
        <extracomment>the widest a column other than the title and the pause reason is fitted to (px) the title keeps at least its content up to this width; the pause reason takes the rest</extracomment>
        <translation>按标题、ID、提供方或原因筛选目标</translation>
    </message>
    <message>
        <source>Filter goals</source>
        <translation>筛选目标</translation>
    </message>
    <message>
        <source>Show goals in state</source>
        <translation>显示处于此状态的目标</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>宿主</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Goals</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Last heartbeat</source>
        <translation>上次心跳</translation>
    </message>
    <message>
        <source>Accounts</source>
        <translation>账户</translation>
    </message>
    <message>
        <source>Hosts</source>
        <extracomment>a host that died only stops beating: its lease runs out with no event, so the list is judged again this often while it is shown (and the heartbeat&apos;s age moves on)</extracomment>
        <translation>宿主</translation>
    </message>
    <message>
        <source>The hosts cannot be read now: {error}</source>
        <translation>现在无法读取宿主：{error}</translation>
    </message>
    <message>
        <source>Hosts in {store}:</source>
        <translation>{store} 中的宿主：</translation>
    </message>
    <message>
        <source>No host has registered in {store} yet.</source>
        <translation>{store} 中还没有宿主登记。</translation>
    </message>
    <message>
        <source>{host} (this machine)</source>
        <translation>{host}（本机）</translation>
    </message>
    <message>
        <source>online</source>
        <translation>在线</translation>
    </message>
    <message>
        <source>offline since {time}</source>
        <translation>自 {time} 起离线</translation>
    </message>
    <message>
        <source>{age} ago</source>
        <translation>{age}前</translation>
    </message>
    <message>
        <source>{machine}, pid {pid}, running since {since}; Goalkeeper {version}</source>
        <translation>{machine}，pid {pid}，自 {since} 起运行；Goalkeeper {version}</translation>
    </message>
    <message>
        <source>&amp;Filter:</source>
        <translation>筛选(&amp;F)：</translation>
    </message>
    <message>
        <source>{shown} of {total}</source>
        <translation>{shown}/{total}</translation>
    </message>
    <message>
        <source>{total} goals</source>
        <translation>{total} 个目标</translation>
    </message>
    <message>
        <source>Whose history</source>
        <translation>谁的历史</translation>
    </message>
    <message>
        <source>All goals</source>
        <translation>全部目标</translation>
    </message>
    <message>
        <source>Selected goal ({title})</source>
        <translation>选中的目标（{title}）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>First page (newest)</source>
        <translation>第一页（最新）</translation>
    </message>
    <message>
        <source>‹ Newer</source>
        <translation>‹ 较新</translation>
    </message>
    <message>
        <source>Newer page</source>
        <translation>较新的一页</translation>
    </message>
    <message>
        <source>Older ›</source>
        <translation>较旧 ›</translation>
    </message>
    <message>
        <source>Older page</source>
        <translation>较旧的一页</translation>
    </message>
    <message>
        <source>Last page (oldest)</source>
        <translation>最后一页（最旧）</translation>
    </message>
    <message>
        <source>E&amp;xport CSV…</source>
        <translation>导出 CSV(&amp;X)…</translation>
    </message>
    <message>
        <source>Resume history</source>
        <translation>恢复历史</translation>
    </message>
    <message>
        <source>&amp;Show:</source>
        <translation>显示(&amp;S)：</translation>
    </message>
    <message>
        <source>Page {page} of {pages} · rows {first}–{last} of {total}</source>
        <translation>第 {page}/{pages} 页 · 第 {first}–{last} 行，共 {total} 行</translation>
    </message>
    <message>
        <source> · {n} newer</source>
        <translation> · {n} 条更新的</translation>
    </message>
    <message>
        <source>Export history as CSV</source>
        <translation>把历史导出为 CSV</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Could not export the history to {path}: {why}</source>
        <translation>无法把历史导出到 {path}：{why}</translation>
    </message>
    <message>
        <source>Exported {n} history rows to {path}</source>
        <translation>已把 {n} 行历史导出到 {path}</translation>
    </message>
    <message>
        <source>· nothing sent yet</source>
        <translation>· 尚未发送</translation>
    </message>
    <message>
        <source>retrying…</source>
        <translation>重试中…</translation>
    </message>
    <message>
        <source>failing</source>
        <translation>持续失败</translation>
    </message>
    <message>
        <source>Notifications: {channels}</source>
        <translation>通知：{channels}</translation>
    </message>
    <message>
        <source>{channel} → {target} (from “{kind}”): </source>
        <translation>{channel} → {target}（从“{kind}”起）：</translation>
    </message>
    <message>
        <source>failing since {since}: {reason}</source>
        <translation>自 {since} 起持续失败：{reason}</translation>
    </message>
    <message>
        <source>retrying: {reason}</source>
        <translation>重试中：{reason}</translation>
    </message>
    <message>
        <source>last sent {when}</source>
        <translation>最近一次发送于 {when}</translation>
    </message>
    <message>
        <source>nothing sent yet</source>
        <translation>尚未发送</translation>
    </message>
    <message>
        <source> — {delivered} sent, {failed} not delivered</source>
        <translation> — 已发送 {delivered} 条，{failed} 条未送达</translation>
    </message>
    <message>
        <source>Notification channels</source>
        <translation>通知渠道</translation>
    </message>
    <message>
        <source>Notifications to {channel} ({target}) are failing: {reason}</source>
        <translation>发往 {channel}（{target}）的通知持续失败：{reason}</translation>
    </message>
    <message>
        <source>keeps {percent} %</source>
        <translation>预留 {percent} %</translation>
    </message>
    <message>
        <source>resets {when}</source>
        <translation>{when} 重置</translation>
    </message>
    <message>
        <source>, exhausted</source>
        <translation>，已耗尽</translation>
    </message>
    <message>
        <source>{label} quota: {used}{state}, {when}, {badge}</source>
        <translation>{label} 配额：{used}{state}，{when}，{badge}</translation>
    </message>
    <message>
        <source>, {forecast}</source>
        <translation>，{forecast}</translation>
    </message>
    <message>
        <source>, {percent} % kept for you</source>
        <translation>，为你预留 {percent} %</translation>
    </message>
    <message>
        <source>Reserve: automatic resumes need more than {reserve} % left; goals Goalkeeper resumed pause at {used} % used</source>
        <translation>预留：自动恢复需要剩余多于 {reserve} %；由 Goalkeeper 恢复的目标在用到 {used} % 时暂停</translation>
    </message>
    <message>
        <source>Quota windows</source>
        <translation>配额窗口</translation>
    </message>
    <message>
        <source>No quota readings yet — they appear as providers report them.</source>
        <translation>还没有配额读数 — 提供方报告后就会显示在这里。</translation>
    </message>
    <message>
        <source>Starting the host…</source>
        <translation>正在启动宿主…</translation>
    </message>
    <message>
        <source>Host: {text}</source>
        <translation>宿主：{text}</translation>
    </message>
    <message>
        <source>Host not running: another Goalkeeper host took over this data directory</source>
        <translation>宿主未运行：另一个 Goalkeeper 宿主接管了这个数据目录</translation>
    </message>
    <message>
        <source>Stopping the host…</source>
        <translation>正在停止宿主…</translation>
    </message>
    <message>
        <source>Host stopped</source>
        <translation>宿主已停止</translation>
    </message>
    <message>
        <source>Host state</source>
        <translation>宿主状态</translation>
    </message>
    <message>
        <source>Host problem</source>
        <translation>宿主问题</translation>
    </message>
    <message>
        <source>Last provider refresh</source>
        <translation>上次读取提供方</translation>
    </message>
    <message>
        <source>Next scheduled wake</source>
        <translation>下次计划唤醒</translation>
    </message>
    <message>
        <source>Providers not read yet</source>
        <translation>尚未读取提供方</translation>
    </message>
    <message>
        <source>Data directory: {dir}</source>
        <translation>数据目录：{dir}</translation>
    </message>
    <message>
        <source> (+{count} more)</source>
        <translation>（另有 {count} 条）</translation>
    </message>
    <message>
        <source>Providers read {when}</source>
        <translation>已于 {when} 读取提供方</translation>
    </message>
    <message>
        <source>Scheduler idle: nothing pending</source>
        <translation>调度器空闲：没有待办事项</translation>
    </message>
    <message>
        <source>The scheduler wakes when a goal or quota changes.</source>
        <translation>目标或配额变化时调度器会被唤醒。</translation>
    </message>
    <message>
        <source>Next wake {countdown}</source>
        <translation>下次唤醒：{countdown}</translation>
    </message>
    <message>
        <source>Usage chart</source>
        <translation>用量图表</translation>
    </message>
    <message>
        <source>No quota window selected.</source>
        <translation>没有选择配额窗口。</translation>
    </message>
    <message>
        <source>No stored readings for {label} in this period.</source>
        <translation>这段时间内没有 {label} 的读数记录。</translation>
    </message>
    <message>
        <source>{label}: {readings} readings, latest {latest} % used, peak {peak} %; {pauses} pauses for quota, {resumes} resumes.</source>
        <translation>{label}：{readings} 条读数，最新已用 {latest} %，峰值 {peak} %；因配额暂停 {pauses} 次，恢复 {resumes} 次。</translation>
    </message>
    <message>
        <source>paused for quota</source>
        <translation>因配额暂停</translation>
    </message>
    <message>
        <source>{label} — used %</source>
        <translation>{label} — 已用 %</translation>
    </message>
    <message>
        <source>Resume policy</source>
        <translation>恢复策略</translation>
    </message>
    <message>
        <source>Priority</source>
        <translation>优先级</translation>
    </message>
    <message>
        <source>Goals waiting on the same window resume highest first; equal ones by the oldest pause.</source>
        <translation>等待同一个窗口的目标按优先级从高到低恢复；优先级相同时，暂停最早的先恢复。</translation>
    </message>
    <message>
        <source>Budget per window period (%)</source>
        <translation>每个窗口周期的预算（%）</translation>
    </message>
    <message>
        <source>no budget</source>
        <translation type="vanished">无预算</translation>
    </message>
    <message>
        <source>e.g. {example} — empty: no budget</source>
        <translation>例如 {example} — 留空：无预算</translation>
    </message>
    <message>
        <source>At most this share of a window per window period; reaching it pauses the goal (reason budget) until the window resets.</source>
        <translation>每个窗口周期最多用掉窗口的这个比例；达到后目标会暂停（原因：预算），直到窗口重置。</translation>
    </message>
    <message>
        <source>Allowed hours</source>
        <translation>允许时段</translation>
    </message>
    <message>
        <source>When automatic resumes of this goal may start, e.g. Mon-Fri 19:00-08:00; empty: the global hours.</source>
        <translation>这个目标的自动恢复可以在什么时段开始，例如 Mon-Fri 19:00-08:00；留空：使用全局时段。</translation>
    </message>
    <message>
        <source>&amp;Apply</source>
        <translation>应用(&amp;A)</translation>
    </message>
    <message>
        <source>Resume policy result</source>
        <translation>恢复策略结果</translation>
    </message>
    <message>
        <source>Priority:</source>
        <translation>优先级：</translation>
    </message>
    <message>
        <source>Budget (% of a window):</source>
        <translation>预算（窗口的 %）：</translation>
    </message>
    <message>
        <source>Allowed hours:</source>
        <translation>允许时段：</translation>
    </message>
    <message>
        <source>e.g. {example} — empty: the global hours, {hours}</source>
        <translation>例如 {example} — 留空：全局时段 {hours}</translation>
    </message>
    <message>
        <source>e.g. {example} — empty: any time</source>
        <translation>例如 {example} — 留空：任何时间</translation>
    </message>
    <message>
        <source>the global hours: {hours}</source>
        <translation type="vanished">全局时段：{hours}</translation>
    </message>
    <message>
        <source>any time (no global hours)</source>
        <translation type="vanished">任何时间（没有全局时段）</translation>
    </message>
    <message>
        <source>Codex goal</source>
        <translation>Codex 目标</translation>
    </message>
    <message>
        <source>Claude prompt</source>
        <translation>Claude 提示词</translation>
    </message>
    <message>
        <source>Start at the reset</source>
        <translation>在重置时开始</translation>
    </message>
    <message>
        <source>Start new work right after a quota window&apos;s next reset, instead of spending the last of this one. Goalkeeper starts it once, after a fresh reading shows the window was reset, under your reserve and allowed hours.</source>
        <translation>在配额窗口下次重置后立即开始新工作，而不是耗尽本窗口的最后一点。Goalkeeper 只开始一次：在最新读数显示窗口已重置之后，并遵守你的预留和允许时段。</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>代理</translation>
    </message>
    <message>
        <source>Directory</source>
        <translation>目录</translation>
    </message>
    <message>
        <source>the project&apos;s directory</source>
        <translation>项目的目录</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Thread</source>
        <translation>线程</translation>
    </message>
    <message>
        <source>optional: an existing Codex thread id</source>
        <translation>可选：现有 Codex 线程的 ID</translation>
    </message>
    <message>
        <source>Objective</source>
        <translation>目标内容</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>排队</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <source>what the goal should achieve</source>
        <translation>目标要达成什么</translation>
    </message>
    <message>
        <source>what Claude should do</source>
        <translation>Claude 要做什么</translation>
    </message>
    <message>
        <source>{label} ({window})</source>
        <translation>{label}（{window}）</translation>
    </message>
    <message>
        <source>No reset time is known for {window} yet: Goalkeeper needs a reading of it first.</source>
        <translation>尚不知道 {window} 的重置时间：Goalkeeper 需要先有它的读数。</translation>
    </message>
    <message>
        <source>{window} resets next at {time}; the work starts right after.</source>
        <translation>{window} 下次于 {time} 重置；工作在其后立即开始。</translation>
    </message>
</context>
</TS>
