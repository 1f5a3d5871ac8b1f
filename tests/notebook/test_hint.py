"""`%%agent` before `%load_ext nbagent` (issue 33 item 3): with the hint installed in a profile (`nbagent hint install`),
a real IPython started on that profile answers IPython's "Cell magic `%%agent` not found" with the line to run;
other usage errors show as before, without the hint, and nothing of nbagent is imported until then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nbagent.cli import main
from nbagent.notebook.hint import HINT, STARTUP_NAME, missing_agent_magic

IPYTHON = Path(sys.executable).with_name("ipython")
CELLS = (
    "import sys; print('nbagent loaded at start:', 'nbagent' in sys.modules)",
    "%%agent\nWhat is 2 + 2?",
    "%agent Add 2 and 2",
    "%bogus",
)


def ipython(profile: Path) -> subprocess.CompletedProcess:
    script = "; ".join(f"get_ipython().run_cell({cell!r})" for cell in CELLS)
    return subprocess.run(
        [str(IPYTHON), f"--profile-dir={profile}", "--no-banner", "--colors=nocolor", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_installed_hint_names_load_ext_for_the_missing_magic_only(tmp_path, capsys):
    profile = tmp_path / "profile"
    assert main(["hint", "install", "--profile-dir", str(profile)]) == 0
    assert (profile / "startup" / STARTUP_NAME).is_file()
    assert "installed" in capsys.readouterr().out

    run = ipython(profile)
    assert "nbagent loaded at start: False" in run.stdout  # the startup file imports nothing of nbagent
    assert "Cell magic `%%agent` not found" in run.stderr and "Line magic function `%agent` not found" in run.stderr
    assert run.stderr.count(HINT) == 2  # after each of the two
    assert "`%bogus` not found" in run.stderr
    assert run.stderr.rstrip().endswith("`%bogus` not found.")  # no hint after an unrelated usage error

    assert main(["hint", "remove", "--profile-dir", str(profile)]) == 0
    plain = ipython(profile)
    assert "Cell magic `%%agent` not found" in plain.stderr and HINT not in plain.stderr


def test_which_messages_are_the_missing_magic():
    assert missing_agent_magic("Cell magic `%%agent` not found.")
    assert missing_agent_magic("Line magic function `%agent` not found.")
    assert not missing_agent_magic("Cell magic `%%agents` not found.")
    assert not missing_agent_magic("Line magic function `%bogus` not found.")
