"""A fake ``codex`` for tests: the app-server subset Goalkeeper speaks, and ``exec resume``.

Installed on PATH as ``codex`` by :func:`install` (tests/codex/fakecodex.py). Everything it does
comes from ``$FAKE_CODEX_DIR/script.json``; what it has to remember between invocations (goal
statuses, how many quota reads were answered) lives in ``state.json``; every invocation and every
message it receives is appended to ``log.jsonl`` — so tests can assert exactly one resume.

script.json keys (all optional):
  mode            normal | silent (never answers) | crash (exits at once) | no_goal_methods
                  | held (another process is the thread's writer: thread/resume is refused)
  rate_limits     list of RateLimitSnapshot objects, one per account/rateLimits/read (the last
                  one repeats): a scripted sequence such as exhausted → weekly still → recovered
  access          list of extra top-level fields for each read's answer (the last repeats),
                  e.g. {"ordinaryUsageAllowed": false, "rateLimitResetCredits": {...}}
  updates         sparse account/rateLimits/updated payloads sent before each read's answer
  goals           {threadId: {objective, status, tokensUsed}} the initial goal store
  after_active    actions once a goal is set active (or resumed while active):
                  ["turn_started"] ["rate_update", {...}] ["goal", status] (Codex changes the
                  goal inside the turn, which then ends: idle + turn/completed)
                  ["goal_in_turn", status] (the same, the turn still running) ["end_turn"]
                  ["ask_approval"] ["sleep", s] ["exit", code]
                  ["long_turn", s] (the turn started last ends by itself after s seconds while
                  requests are answered meanwhile; like the real CLI, Codex then starts the
                  next turn of a goal that is still active, when ``continue_turns`` is set)
  quiet_set       thread/goal/set answers but no notification ever confirms it
  exec            {"append": [lines], "rollout": path, "exit": n, "stdout": text, "sleep": s,
                  "limit": true (exit 1 at once with the usage-limit error),
                  "remote": "busy" | "gone" (how ``--remote`` fails: the app-server runs a turn
                  on the thread, or nobody listens)}; like 0.169.0 it refuses a cwd outside a
                  git repository; ``exec resume --remote ADDR`` is 0.171.0's (below that
                  version: "unexpected argument", exit 2), with no trust check
  version         what ``codex --version`` prints (default ``codex-cli 0.169.0``)
  proxy           "unreachable": ``app-server proxy`` exits 1 at once, as the real one does when
                  it cannot connect to the control socket
"""

import fcntl
import json
import os
import select
import stat
import sys
import time

DIR = os.environ["FAKE_CODEX_DIR"]


def _locked(name, update):
    path = os.path.join(DIR, name)
    with open(os.path.join(DIR, ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            data = {}
        result = update(data)
        with open(path, "w") as handle:
            json.dump(data, handle)
        return result


def log(entry):
    entry = {"pid": os.getpid(), **entry}
    with open(os.path.join(DIR, ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(os.path.join(DIR, "log.jsonl"), "a") as handle:
            handle.write(json.dumps(entry) + "\n")


def script():
    try:
        with open(os.path.join(DIR, "script.json")) as handle:
            return json.load(handle)
    except OSError:
        return {}


def stdin_kind():
    st = os.fstat(0)
    if stat.S_ISFIFO(st.st_mode):
        return "pipe"
    devnull = os.stat(os.devnull)
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == devnull.st_rdev:
        return "devnull"
    return "other"


def send(message):
    if "method" in message and "id" not in message:
        message["emittedAtMs"] = int(time.time() * 1000)  # 0.169.0 stamps every notification
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


#: what 0.169.0 says when the usage limit stops a turn (the app-server's ``error`` and the
#: failed turn's ``error``)
LIMIT_TEXT = ("You\u2019ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), "
              "visit https://chatgpt.com/settings/usage to purchase more credits or try again at "
              "Dec 2nd, 2026 12:58 AM.")
LIMIT_ERROR = {"message": LIMIT_TEXT, "codexErrorInfo": "usageLimitExceeded",
               "additionalDetails": None}


def status_changed(thread, kind):
    status = {"type": kind, "activeFlags": []} if kind == "active" else {"type": kind}
    send({"method": "thread/status/changed", "params": {"threadId": thread, "status": status}})


#: the turns this app-server started, and the one running for a while (``long_turn``)
TURNS = {"n": 0, "thread": None, "ends_at": None, "seconds": 0.0}


def turn_id():
    return f"turn-{max(TURNS['n'], 1)}"


def end_turn(thread, status="completed"):
    """How 0.169.0 ends a turn: the thread goes idle (``systemError`` after the usage limit,
    then an ``error`` notification), then turn/completed."""
    limited = status == "failed"
    status_changed(thread, "systemError" if limited else "idle")
    if limited:
        send({"method": "error", "params": {"error": LIMIT_ERROR, "willRetry": False,
                                            "threadId": thread, "turnId": turn_id()}})
    send({"method": "turn/completed", "params": {"threadId": thread, "turn": {
        "id": turn_id(), "status": status, "items": [],
        "error": LIMIT_ERROR if limited else None}}})


def finish_long_turn(plan):
    """The long turn ran its time: it ends, and an active goal goes on with the next turn."""
    thread, TURNS["ends_at"] = TURNS["thread"], None
    log({"turn_completed": turn_id()})
    end_turn(thread)
    goal = goal_of(thread)
    if plan.get("continue_turns") and goal is not None and goal["status"] == "active":
        after_active(thread, [["turn_started"], ["long_turn", TURNS["seconds"]]])


def goal_of(thread):
    def read(state):
        goals = state.setdefault("goals", script().get("goals", {}))
        goal = goals.get(thread)
        return None if goal is None else {"threadId": thread, **goal}
    return _locked("state.json", read)


def set_status(thread, status, reply_to=None, turn=None):
    def write(state):
        goals = state.setdefault("goals", script().get("goals", {}))
        goal = goals.setdefault(thread, {"objective": "?", "tokensUsed": 0})
        before = {"threadId": thread, **goal}
        now = int(time.time())
        if goal.get("status") == "active" and now > goal.get("updatedAt", now):
            goal["timeUsedSeconds"] = goal.get("timeUsedSeconds", 0) + now - goal["updatedAt"]
            before = {"threadId": thread, **goal, "updatedAt": now}  # the time it ran
        else:
            before = None
        goal["status"] = status
        goal["updatedAt"] = max(now, goal.get("updatedAt", 0))  # epoch seconds
        return before, {"threadId": thread, **goal}
    accounted, goal = _locked("state.json", write)
    if accounted is not None and reply_to is not None:
        # 0.169.0 first reports the time an active goal ran since its last update, still active
        # and before the answer (seen after an interrupted turn)
        send({"method": "thread/goal/updated",
              "params": {"threadId": thread, "turnId": None, "goal": accounted}})
    if reply_to is not None:
        send({"id": reply_to, "result": {"goal": goal}})
        if script().get("quiet_set"):
            return goal  # answers, but never confirms with a notification
    send({"method": "thread/goal/updated",
          "params": {"threadId": thread, "turnId": turn, "goal": goal}})
    return goal


def start_turn(thread, action):
    if action[0] == "long_turn":
        TURNS.update(thread=thread, seconds=action[1], ends_at=time.monotonic() + action[1])
        return
    TURNS["n"] += 1
    log({"turn_started": turn_id()})
    status_changed(thread, "active")
    send({"method": "turn/started", "params": {
        "threadId": thread, "turn": {"id": turn_id(), "status": "inProgress", "items": []}}})


def after_active(thread, actions):
    for action in actions:
        kind = action[0]
        if kind in ("turn_started", "long_turn"):
            start_turn(thread, action)
        elif kind == "rate_update":
            send({"method": "account/rateLimits/updated", "params": {"rateLimits": action[1]}})
        elif kind in ("goal", "goal_in_turn"):
            set_status(thread, action[1], turn="turn-1")
            if kind == "goal":
                end_turn(thread, "failed" if action[1] == "usageLimited" else "completed")
        elif kind == "end_turn":
            end_turn(thread)
        elif kind == "ask_approval":
            send({"id": 9000, "method": "item/commandExecution/requestApproval",
                  "params": {"threadId": thread, "turnId": "turn-1", "itemId": "i1",
                             "command": "rm -rf build"}})
        elif kind == "sleep":
            watch_stdin(action[1])
        elif kind == "exit":
            sys.exit(action[1])


_BUFFER = bytearray()


def read_line():
    """One line from stdin ('' at end of input), unbuffered so a sleep can watch for EOF."""
    while b"\n" not in _BUFFER:
        chunk = os.read(0, 65536)
        if not chunk:
            line, _BUFFER[:] = bytes(_BUFFER), b""
            return line.decode()
        _BUFFER.extend(chunk)
    index = _BUFFER.index(b"\n") + 1
    line = bytes(_BUFFER[:index])
    del _BUFFER[:index]
    return line.decode()


def watch_stdin(seconds):
    """Sleep, noticing if the client closes stdin meanwhile (it let the app-server go while a
    turn was still running): logged as ``eof_during_turn`` — the abort the real CLI suffers."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([0], [], [], left)
        if ready:
            chunk = os.read(0, 65536)
            if not chunk:
                log({"eof_during_turn": True})
                sys.exit(0)
            _BUFFER.extend(chunk)


def _count_read(state):
    state["reads"] = state.get("reads", 0) + 1
    return state["reads"]


def rate_limits_read(request, plan):
    reads = _locked("state.json", _count_read)
    for update in plan.get("updates", []):
        send({"method": "account/rateLimits/updated", "params": {"rateLimits": update}})
    sequence = plan.get("rate_limits") or [{"limitId": "codex", "primary": None}]
    snapshot = sequence[min(reads, len(sequence)) - 1]
    extras = plan.get("access") or [{"ordinaryUsageAllowed": None}]
    result = {"rateLimits": snapshot, "rateLimitsByLimitId": {"codex": snapshot},
              "rateLimitResetCredits": {"availableCount": 0, "credits": []},
              "accountId": "acct-fake", "rateLimitUpsell": None,
              **extras[min(reads, len(extras)) - 1]}
    send({"id": request["id"], "result": result})


def error(request, code, message):
    send({"id": request["id"], "error": {"code": code, "message": message}})


def on_initialize(request, params, plan):
    name = (params.get("clientInfo") or {}).get("name", "client")
    version = plan.get("version", "codex-cli 0.169.0").split()[-1]
    send({"id": request["id"], "result": {  # the shape 0.169.0 answers with
        "userAgent": f"{name}/{version} (Debian 12.0.0; x86_64) xterm ({name}; 0)",
        "codexHome": os.environ.get("CODEX_HOME"), "platformFamily": "unix",
        "platformOs": "linux"}})
    # and notifications no client asked for, which a client must let pass
    send({"method": "configWarning", "params": {"summary": "Codex could not find bubblewrap on "
                                                           "PATH.", "details": None}})
    send({"method": "remoteControl/status/changed",
          "params": {"status": "disabled", "serverName": "fake", "installationId": "0",
                     "environmentId": None}})


def on_resume(request, params, plan):
    thread = params.get("threadId")
    if plan.get("mode") == "held":
        error(request, -32600, f"thread {thread} already has an active writer")
        return
    goal = goal_of(thread)
    send({"method": "mcpServer/startupStatus/updated",
          "params": {"threadId": thread, "name": "codex_apps", "status": "starting",
                     "error": None, "failureReason": None}})
    status_changed(thread, "idle")
    result = {"thread": {"id": thread, "turns": []}}
    if not params.get("excludeTurns"):
        result["deprecationNotice"] = "thread/resume without excludeTurns returns full history"
    send({"id": request["id"], "result": result})
    if goal is not None:
        # 0.169.0 replays the goal's stored status right after loading the thread: history
        send({"method": "thread/goal/updated",
              "params": {"threadId": thread, "turnId": None, "goal": goal}})
    if goal is not None and goal["status"] == "active":
        after_active(thread, plan.get("after_active", [["turn_started"]]))


def on_thread_start(request, params, plan):
    """A new thread, not written down until a goal is set on it (as 0.169.0)."""
    number = _locked("state.json", lambda state: state.update(
        threads=state.get("threads", 0) + 1) or state["threads"])
    send({"id": request["id"], "result": {"thread": {"id": f"new-thread-{number}",
                                                     "cwd": params.get("cwd")}}})


def on_goal_get(request, params, plan):
    send({"id": request["id"], "result": {"goal": goal_of(params.get("threadId"))}})


ORIGINS = ("user", "automatic")


def on_goal_set(request, params, plan):
    thread = params.get("threadId")
    origin = params.get("origin")
    if origin is not None and origin not in ORIGINS:
        error(request, -32600, f"Invalid request: unknown variant `{origin}`, expected `user` or "
                               "`automatic`")
        return
    current = goal_of(thread)
    if params.get("objective"):  # a new goal (or a new objective) on the thread
        def create(state):
            goals = state.setdefault("goals", script().get("goals", {}))
            goals[thread] = {"objective": params["objective"], "tokensUsed": 0}
        _locked("state.json", create)
        current = current or {}
    elif current is None:
        error(request, -32600, f"cannot update goal for thread {thread}: no goal exists")
        return
    goal = set_status(thread, params["status"], reply_to=request["id"])
    if goal["status"] == "active" and current.get("status") != "active" and not plan.get(
            "quiet_set"):  # an active goal set active again gets no new turn
        after_active(thread, plan.get("after_active", [["turn_started"]]))


def on_interrupt(request, params, plan):
    if TURNS["ends_at"] is not None:
        TURNS["ends_at"] = None
        log({"interrupted": params.get("turnId")})
    send({"id": request["id"], "result": {}})
    status_changed(params.get("threadId"), "idle")
    send({"method": "turn/completed", "params": {
        "threadId": params.get("threadId"),
        "turn": {"id": params.get("turnId"), "status": "interrupted"}}})


HANDLERS = {
    "initialize": on_initialize,
    "account/rateLimits/read": lambda request, params, plan: rate_limits_read(request, plan),
    "thread/start": on_thread_start,
    "thread/resume": on_resume,
    "thread/goal/get": on_goal_get,
    "thread/goal/set": on_goal_set,
    "turn/interrupt": on_interrupt,
}


def handle(request, plan):
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return  # a notification (initialized)
    if method in HANDLERS and not (method.startswith("thread/goal/")
                                   and plan.get("mode") == "no_goal_methods"):
        HANDLERS[method](request, params, plan)
    else:  # what 0.169.0 answers for a method it does not know
        error(request, -32600, f"Invalid request: unknown variant `{method}`, expected one of "
                               f"{', '.join(f'`{m}`' for m in HANDLERS)}")


def app_server(plan):
    if plan.get("mode") == "crash":
        sys.stderr.write("fake codex: app-server crashed at start\n")
        sys.exit(3)
    while True:
        if TURNS["ends_at"] is not None and b"\n" not in _BUFFER:
            left = TURNS["ends_at"] - time.monotonic()
            if left <= 0 or not select.select([0], [], [], left)[0]:
                finish_long_turn(plan)
                continue
        raw = read_line()
        if not raw:
            if TURNS["ends_at"] is not None:
                log({"eof_during_turn": True})
            break
        try:
            request = json.loads(raw)
        except ValueError:
            continue
        log({"recv": request})
        if plan.get("mode") == "silent":
            continue
        if "id" in request and "method" not in request:
            continue  # a reply to our own request (the approval)
        handle(request, plan)


def trusted(path):
    """0.169.0 runs exec only inside a git repository (or a directory trusted in its config)."""
    path = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def version_of(plan):
    text = plan.get("version", "codex-cli 0.169.0").split()[-1]
    return tuple(int(n) for n in text.split("."))


def remote_refusal(spec, remote):
    """What 0.171.0's ``exec resume --remote`` says when it cannot run the turn there."""
    if spec.get("remote") == "busy":
        return "Error: remote thread already has an active turn\n"
    if spec.get("remote") == "gone":
        return (f"Error: failed to connect to remote app server at `{remote}`: No such file or "
                "directory (os error 2)\n")
    return None


def exec_resume(plan, args):
    spec = plan.get("exec", {})
    remote = None
    if args[:1] == ["--remote"]:
        if version_of(plan) < (0, 171, 0):
            sys.stderr.write("error: unexpected argument '--remote' found\n")
            sys.exit(2)
        remote = args[1]
        refusal = remote_refusal(spec, remote)
        if refusal:
            sys.stderr.write(refusal)
            sys.exit(1)
    if remote is None and not trusted(os.getcwd()):
        sys.stderr.write("Not inside a trusted directory and --skip-git-repo-check was not "
                         "specified.\n")
        sys.exit(1)
    sys.stdin.read()  # like the real exec: hangs while stdin is an open pipe
    if spec.get("limit"):  # 0.169.0 at a usage limit: exit 1 within about half a second
        if spec.get("rollout"):
            with open(spec["rollout"], "a") as handle:
                handle.write("".join(spec.get("append", [])))
        # 0.169.0 prints it twice on stderr, then the tokens used
        sys.stderr.write(f"ERROR: {LIMIT_TEXT}\nERROR: {LIMIT_TEXT}\ntokens used\n30\n")
        sys.exit(1)
    time.sleep(spec.get("sleep", 0))
    if spec.get("rollout"):
        with open(spec["rollout"], "a") as handle:
            handle.write("".join(spec.get("append", [])))
    sys.stdout.write(spec.get("stdout", "done\n"))
    sys.stdout.flush()
    sys.exit(spec.get("exit", 0))


def main():
    plan = script()
    log({"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": stdin_kind(),
         "codex_home": os.environ.get("CODEX_HOME")})
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(plan.get("version", "codex-cli 0.169.0") + "\n")
    elif sys.argv[1:3] == ["app-server", "proxy"] and plan.get("proxy") == "unreachable":
        sys.stderr.write("Error: failed to connect to socket at "
                         f"{os.environ.get('CODEX_HOME')}/app-server-control/"
                         "app-server-control.sock\n")
        sys.exit(1)
    elif sys.argv[1:2] == ["app-server"]:
        app_server(plan)
    elif sys.argv[1:3] == ["exec", "resume"]:
        exec_resume(plan, sys.argv[3:])
    else:
        sys.stderr.write(f"fake codex: unsupported {sys.argv[1:]}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
