import sys
from pathlib import Path

# the tools are scripts, not a package: make them importable as their own modules
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
