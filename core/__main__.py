import sys

from core.cli import script

sys.exit(script())
