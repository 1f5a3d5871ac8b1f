"""Tools saved as standalone Python files (to_dict / save) and loaded back (from_code / from_dict)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PIL import Image

import nbagent
from nbagent.tools import (
    FinalAnswerTool,
    PythonInterpreterTool,
    Tool,
    ToolSerializationError,
    VisitWebpageTool,
    tool,
)

GREETING = "Hello"
FACTORS = (2, 3)


def _shout(text: str) -> str:
    return text.upper() + "!"


@tool
def greet(name: str, times: int = 1) -> str:
    """Greets someone.

    Args:
        name: Who to greet.
        times: How many greetings.
    """
    return " ".join([_shout(f"{GREETING} {name}")] * times)


class _Base(Tool):
    def scale(self, x: float) -> float:
        return x * math.prod(FACTORS)


class ScaledSquareRoot(_Base):
    name = "scaled_sqrt"
    description = "Square root times six."
    inputs = {"x": {"type": "number", "description": "A non-negative number."}}
    output_type = "number"

    def forward(self, x: float) -> float:
        return self.scale(math.sqrt(x))


@tool
def image_size(width: int) -> str:
    """Makes an image and reports its size.

    Args:
        width: The width.
    """
    return str(Image.new("RGB", (width, 2)).size)


_LOCK = threading.Lock()


@tool
def uses_lock(x: int) -> int:
    """Uses a lock.

    Args:
        x: A number.
    """
    with _LOCK:
        return x


def test_function_tool_round_trip_from_code():
    code = greet.to_dict()["code"]
    assert "@tool\ndef greet(" in code and "def _shout(" in code and "GREETING = 'Hello'" in code
    loaded = Tool.from_code(code)
    assert loaded is not greet
    assert (loaded.name, loaded.description, loaded.inputs, loaded.output_type) == (
        greet.name,
        greet.description,
        greet.inputs,
        greet.output_type,
    )
    assert loaded("Ada", times=2) == greet("Ada", times=2) == "HELLO ADA! HELLO ADA!"
    assert loaded.to_code() == code  # a loaded tool can be saved again, identically


def test_class_tool_round_trip_inlines_local_base_class_and_constants():
    data = ScaledSquareRoot().to_dict()
    code = data["code"]
    assert "from nbagent.tools import Tool" in code and "class _Base(Tool):" in code and "FACTORS = (2, 3)" in code
    assert code.index("class _Base") < code.index("class ScaledSquareRoot")
    loaded = Tool.from_dict(data)
    assert type(loaded).__name__ == "ScaledSquareRoot" and loaded(16) == 24.0
    assert data["requirements"] == []  # stdlib only


def test_requirements_name_distributions():
    data = image_size.to_dict()
    assert "import PIL.Image as Image" in data["code"]
    assert data["requirements"] == ["pillow"]
    assert Tool.from_dict(data)(5) == "(5, 2)"


def test_save_writes_a_standalone_python_file(tmp_path):
    path = greet.save(tmp_path / "out", tool_file_name="greet", make_gradio_app=False)
    assert path == tmp_path / "out" / "greet.py"
    assert (tmp_path / "out" / "requirements.txt").read_text() == ""
    assert not (tmp_path / "out" / "app.py").exists()
    repo_root = str(Path(nbagent.__file__).resolve().parent.parent)
    script = (
        "import json, runpy, sys\n"
        "ns = runpy.run_path(sys.argv[1])\n"
        "t = ns['greet']\n"
        "print(json.dumps([t.name, t.inputs, t('Bob')]))\n"
    )
    env = {**os.environ, "PYTHONPATH": repo_root}
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    name, inputs, output = json.loads(done.stdout.strip().splitlines()[-1])
    assert name == "greet" and inputs == greet.inputs and output == "HELLO BOB!"


def test_save_with_gradio_app_by_default(tmp_path):
    """smolagents' default: save() writes app.py and requirements.txt along with the tool."""
    ScaledSquareRoot().save(tmp_path)
    app = (tmp_path / "app.py").read_text()
    compile(app, "app.py", "exec")
    assert 'with_name("tool.py")' in app
    assert (tmp_path / "requirements.txt").read_text().split() == ["gradio"]


@pytest.mark.parametrize("factory", [FinalAnswerTool, VisitWebpageTool, PythonInterpreterTool])
def test_default_tools_round_trip(factory):
    original = factory()
    data = original.to_dict()
    loaded = Tool.from_dict(data)
    assert type(loaded).__name__ == type(original).__name__
    assert loaded.name == original.name and loaded.inputs == original.inputs
    compile(data["code"], "tool.py", "exec")


def test_unsaveable_global_is_a_clear_error():
    with pytest.raises(ToolSerializationError, match=r"'uses_lock' uses the global name '_LOCK' \(a lock\).*Fix:"):
        uses_lock.to_dict()


def test_tool_without_source_is_a_clear_error():
    namespace: dict = {}
    exec('def f(x: int) -> int:\n    """Doc.\n\n    Args:\n        x: n.\n    """\n    return x\n', namespace)
    made = tool(namespace["f"])
    assert made(2) == 2
    with pytest.raises(ToolSerializationError, match="kept no source.*Fix"):
        made.to_dict()


def test_from_code_errors():
    with pytest.raises(ToolSerializationError, match="not valid Python"):
        Tool.from_code("def broken(:\n")
    with pytest.raises(ToolSerializationError, match="found none"):
        Tool.from_code("x = 1\n")
    with pytest.raises(ToolSerializationError, match=r"found \['A', 'B'\]"):
        Tool.from_code(
            "from nbagent.tools import Tool\n"
            "class A(Tool):\n    name='a'\n    description='A.'\n    inputs={}\n    output_type='null'\n"
            "    def forward(self):\n        return None\n"
            "class B(Tool):\n    name='b'\n    description='B.'\n    inputs={}\n    output_type='null'\n"
            "    def forward(self):\n        return None\n"
        )
    with pytest.raises(ToolSerializationError, match="takes no init arguments"):
        Tool.from_code(greet.to_code(), extra=1)
    with pytest.raises(ToolSerializationError, match="needs a dict with a 'code'.*must contain 'code' key"):
        Tool.from_dict({"name": "x"})


def test_from_code_passes_init_arguments():
    code = (
        "from nbagent.tools import Tool\n"
        "class Keyed(Tool):\n"
        "    name = 'keyed'\n    description = 'Needs a key.'\n    inputs = {}\n    output_type = 'string'\n"
        "    def __init__(self, key):\n        super().__init__()\n        self.key = key\n"
        "    def forward(self):\n        return self.key\n"
    )
    assert Tool.from_code(code, key="k1")() == "k1"
    with pytest.raises(ToolSerializationError, match="Could not create tool class Keyed.*Fix: pass"):
        Tool.from_code(code)


NOTEBOOK_CELLS = [
    "import math\nfrom nbagent.tools import Tool, tool\nFACTOR = 3\ndef helper(x):\n    return x * FACTOR\n",
    "@tool\ndef tripled_root(x: float) -> float:\n    '''Triple square root.\n\n    Args:\n        x: A number.\n"
    "    '''\n    return helper(math.sqrt(x))\n\n"
    "class Cube(Tool):\n    name = 'cube'\n    description = 'Cubes three times x.'\n"
    "    inputs = {'x': {'type': 'number', 'description': 'n'}}\n    output_type = 'number'\n"
    "    def forward(self, x):\n        return helper(x) ** 3\n",
    "import json\nloaded = [Tool.from_code(tripled_root.to_code()), Tool.from_code(Cube().to_code())]\n"
    "print(json.dumps([loaded[0](4), loaded[1](1), 'def helper' in Cube().to_code()]))\n",
]


def test_tools_defined_in_notebook_cells_save_with_their_helpers():
    """Class sources in IPython cells are not found by inspect on Python 3.11; we find them anyway."""
    repo_root = str(Path(nbagent.__file__).resolve().parent.parent)
    script = (
        "import json, sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "for cell in json.loads(sys.argv[1]):\n"
        "    result = shell.run_cell(cell)\n"
        "    if not result.success:\n"
        "        sys.exit(1)\n"
    )
    env = {**os.environ, "PYTHONPATH": repo_root}
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(NOTEBOOK_CELLS)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [6.0, 27, True]


def test_saving_needs_init_defaults():
    """A saved tool is rebuilt without arguments: required __init__ parameters would be lost (smolagents refuses too)."""

    class WithUrl(Tool):
        name = "with_url"
        description = "Prefixes a URL."
        inputs = {"path": {"type": "string", "description": "A path."}}
        output_type = "string"

        def __init__(self, url):
            super().__init__()
            self.url = url

        def forward(self, path):
            return self.url + path

    with pytest.raises(ToolSerializationError, match=r"Parameters in __init__ must have default values.*\['url'\]"):
        WithUrl("http://x/").to_dict()


def test_a_name_local_to_the_defining_function_is_undefined_when_saved(tmp_path):
    import numpy as np

    @tool
    def noise() -> str:
        """Random noise."""
        return str(np.random.random())

    class Noise(Tool):
        name = "noise"
        description = "Random noise."
        inputs = {}
        output_type = "string"

        def helper(self):
            return np.random.random()

        def forward(self):
            return str(self.helper())

    for made in (noise, Noise()):
        with pytest.raises(ToolSerializationError, match="Name 'np' is undefined.*Fix: import or define np"):
            made.save(tmp_path)


def test_names_only_in_annotations_need_not_resolve():
    code = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from nbagent.tools import Tool\n"
        "if TYPE_CHECKING:\n    from pandas import DataFrame\n"
        "class Rows(Tool):\n    name = 'rows'\n    description = 'Counts rows.'\n"
        "    inputs = {'n': {'type': 'integer', 'description': 'n'}}\n    output_type = 'integer'\n"
        "    def forward(self, n: int) -> DataFrame:\n        return n\n"
    )
    assert "class Rows" in Tool.from_code(code).to_dict()["code"]


def test_validate_tool_class_lists_what_prevents_saving():
    from nbagent.tools import validate_tool_class

    class BadName(Tool):
        name = "bad name"
        description = "x"
        inputs = {}
        output_type = "string"

        def __init__(self, required):
            super().__init__()

        def forward(self):
            return UNDEFINED  # noqa: F821

    with pytest.raises(ValueError) as info:
        validate_tool_class(BadName)
    message = str(info.value)
    assert "Class attribute 'name' must be a valid Python identifier" in message
    assert "Parameters in __init__ must have default values, found required parameters ['required']" in message
    assert "Name 'UNDEFINED' is undefined" in message
    assert validate_tool_class(ScaledSquareRoot) is None  # globals and helpers are saved along: fine
    assert validate_tool_class(type(greet)) is None
