"""Real workloads the worker must still run under its system-call allow-list.

Shared by ``scripts/record_syscalls.py`` (which records the system calls they make, to derive the allow-list) and
``test_syscall_allowlist.py`` (which checks they still run once the allow-list is enforced). Each workload is agent
code plus the imports it needs authorized; it ends with an expression whose value the test checks.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple

from nbagent.sandbox.boundary.netns import RELAY_PORT


class Workload(NamedTuple):
    imports: tuple[str, ...]
    code: str
    expected: object


NUMPY = Workload(
    ("numpy", "numpy.*", "os", "os.path"),
    """
import numpy as np, os
rng = np.random.default_rng(0)
a = rng.normal(size=(300, 300))
inv = np.linalg.inv(a @ a.T + np.eye(300))
spectrum = np.fft.rfft(a[0])
np.save(os.path.join(SCRATCH, "a.npy"), a)
back = np.load(os.path.join(SCRATCH, "a.npy"))
bool(np.allclose(a, back)) and inv.shape == (300, 300) and spectrum.size == 151
""",
    True,
)

PANDAS = Workload(
    ("pandas", "pandas.*", "numpy", "numpy.*", "matplotlib", "matplotlib.*", "os", "os.path", "io"),
    """
import os, io
import numpy as np, pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
scratch = SCRATCH
path = os.path.join(scratch, "sales.csv")
with open(path, "w") as fh:
    fh.write("day,shop,amount\\n")
    for i in range(2000):
        fh.write(f"2024-01-{i % 28 + 1:02d},s{i % 7},{i * 1.5}\\n")
df = pd.read_csv(path)
df["day"] = pd.to_datetime(df["day"])
shops = pd.DataFrame({"shop": [f"s{i}" for i in range(7)], "city": list("abcdefg")})
merged = df.merge(shops, on="shop")
totals = merged.groupby("city")["amount"].sum()
weekly = merged.set_index("day").resample("W")["amount"].mean()
ax = totals.plot(kind="bar")
ax.figure.savefig(os.path.join(scratch, "totals.png"))
plt.close("all")
buf = io.StringIO()
merged.to_csv(buf)
len(totals) == 7 and len(weekly) > 0 and os.path.getsize(os.path.join(scratch, "totals.png")) > 1000
""",
    True,
)

MATPLOTLIB = Workload(
    ("matplotlib", "matplotlib.*", "numpy", "numpy.*", "os", "os.path"),
    """
import os
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
scratch = SCRATCH
x = np.linspace(0, 10, 200)
fig, axes = plt.subplots(1, 2)
axes[0].plot(x, np.sin(x), label="sin")
axes[0].legend()
axes[1].hist(np.cos(x), bins=20)
fig.suptitle("a figure")
sizes = []
for ext in ("png", "pdf", "svg"):
    fig.savefig(os.path.join(scratch, "figure." + ext))
    sizes.append(os.path.getsize(os.path.join(scratch, "figure." + ext)))
plt.close(fig)
min(sizes) > 1000
""",
    True,
)

PIL = Workload(
    ("PIL", "PIL.*", "os", "os.path"),
    """
import os
from PIL import Image, ImageDraw, ImageFilter
scratch = SCRATCH
image = Image.new("RGB", (200, 100), "white")
ImageDraw.Draw(image).rectangle([10, 10, 90, 60], fill="red")
image = image.filter(ImageFilter.GaussianBlur(2)).resize((100, 50))
image.save(os.path.join(scratch, "image.png"))
image.save(os.path.join(scratch, "image.jpg"), quality=80)
again = Image.open(os.path.join(scratch, "image.png"))
again.load()
again.size
""",
    (100, 50),
)

STDLIB = Workload(
    (
        "asyncio", "json", "decimal", "tempfile", "os", "os.path", "pathlib", "hashlib", "zlib", "csv", "io",
        "shutil", "fractions", "sqlite3", "gzip", "uuid", "secrets",
    ),
    """
import asyncio, collections, csv, datetime, decimal, fractions, gzip, hashlib, io, itertools, json, math, os
import pathlib, queue, random, re, secrets, shutil, sqlite3, statistics, tempfile, time, uuid, zlib
async def work(n):
    await asyncio.sleep(0.01)
    return n
async def everything():
    return await asyncio.wait_for(asyncio.gather(*(work(i) for i in range(5))), 5)
gathered = asyncio.run(everything())
time.sleep(0.01)
with tempfile.NamedTemporaryFile("w+", suffix=".json") as fh:
    json.dump({"when": datetime.datetime.now().isoformat()}, fh)
    fh.flush()
    fh.seek(0)
    loaded = json.load(fh)
folder = pathlib.Path(tempfile.mkdtemp())
(folder / "a.txt").write_text("hello")
shutil.copyfile(folder / "a.txt", folder / "b.txt")  # not copy: chmod is denied
with gzip.open(folder / "c.gz", "wt") as fh:
    fh.write("zipped")
db = sqlite3.connect(str(folder / "db.sqlite"))
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(i,) for i in range(10)])
total = db.execute("select sum(x) from t").fetchone()[0]
db.close()
shutil.rmtree(folder)
text = re.sub(r"\\d+", "#", "a1b22")
digest = hashlib.sha256(zlib.compress(b"x" * 1000)).hexdigest()
money = decimal.Decimal("1.10") * 3
tokens = (uuid.uuid4().hex, secrets.token_hex(8), random.random(), os.path.isdir(SCRATCH))
(gathered, "when" in loaded, total, text, len(digest), str(money), str(fractions.Fraction(1, 3) * 3),
 statistics.mean([1, 2, 3]))
""",
    ([0, 1, 2, 3, 4], True, 45, "a#b#", 64, "3.30", "1", 2),
)  # fmt: skip

#: Threads: never importable by agent code under the guards, so run with the guards off only (libraries use them).
THREADS = Workload(
    ("threading", "concurrent.futures", "queue"),
    """
import queue, threading
from concurrent.futures import ThreadPoolExecutor
results = queue.Queue()
threads = [threading.Thread(target=lambda i=i: results.put(i * i)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with threading.Lock(), ThreadPoolExecutor(2) as pool:
    squares = list(pool.map(lambda v: v * v, range(10)))
timer = threading.Timer(0.01, lambda: results.put(-1))
timer.start()
timer.join()
(sorted(results.queue), squares[-1])
""",
    ([-1, 0, 1, 4, 9], 81),
)

#: Network modules: the agent's code with ``URL`` (an HTTP server on 127.0.0.1) defined.
NETWORK = Workload(
    ("requests", "requests.*", "urllib", "urllib.*", "http", "http.*", "socket"),
    """
import urllib.request
import requests
with urllib.request.urlopen(URL, timeout=5) as response:
    first = response.read()
session = requests.Session()
second = session.get(URL, timeout=5).text
third = requests.post(URL, data=b"x" * 100_000, timeout=5).status_code
(first, second, third)
""",
    (b"hello", "hello", 200),
)


def tunnel(port: int) -> str:
    """Agent code: GET / from 127.0.0.1:``port`` through the worker's relay and the host's CONNECT proxy (netns.py)."""
    return (
        "import http.client\n"
        f"c = http.client.HTTPConnection('127.0.0.1', {RELAY_PORT}, timeout=5)\n"
        f"c.set_tunnel('127.0.0.1', {port})\n"
        "c.request('GET', '/')\n"
        "c.getresponse().read()"
    )


#: Workloads that run with the guards on and off.
OFFLINE = {"numpy": NUMPY, "pandas": PANDAS, "matplotlib": MATPLOTLIB, "PIL": PIL, "stdlib": STDLIB}


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer()

    def _answer(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def hello_server() -> Iterator[tuple[str, int]]:
    """An HTTP server on 127.0.0.1 answering ``hello``: yields its URL and port; stopped on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/", server.server_port
    finally:
        server.shutdown()
        server.server_close()
