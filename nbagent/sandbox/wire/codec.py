"""Plain data between the worker and the host, without pickle: a JSON tree plus raw byte buffers.

The worker :func:`encode`\\ s a value; the host :func:`decode`\\ s it, building only these types from data, never calling
code that came from the worker:

* JSON values, ``tuple``, ``set``, ``frozenset``, ``bytes``, ``bytearray``, ``complex``, big ``int``, non-finite
  ``float``, ``datetime``/``date``/``time``/``timedelta``, ``Decimal``, ``Fraction``;
* numpy arrays and scalars of non-object dtypes (raw buffers), and object arrays of the plain values above;
* pandas ``DataFrame``/``Series``/``Index``/``MultiIndex`` whose columns are numpy dtypes, categoricals, nullable
  integers, floats and booleans, strings, tz-aware datetimes, periods, intervals or object columns of the plain
  scalars above; those columns also standalone (``Categorical``, ``StringArray``, ``IntegerArray``, ``PeriodArray``,
  ``IntervalArray``, …: an answer's ``.unique()``); ``Timestamp``, ``Timedelta``, ``NaT``, ``NA``, ``Period``,
  ``Interval`` (pandas_values.py);
* PIL images (raw pixels in a few modes); :class:`AgentValue` (the repr/str of an agent-defined object);
* references: ``{"$": "remote"}`` (an object that stays in the worker; the host makes a handle or proxy) and
  ``{"$": "host"}`` (an object the host gave the worker, returned as itself).

Only exact types count (a ``str`` subclass is not plain data). Anything else, too deep or too large, is a reference.

Each object is encoded once: a later occurrence is ``{"$": "ref", "to": n}``, and the first one carries ``"#": n``
(a list: a leading ``{"$": "@", "#": n}``), so the host rebuilds the aliasing and never multiplies data. Long strings
and long lists of scalars travel as buffers; a broadcast (stride-0) array as its small base and the full shape. A
buffer over 1 MiB may travel in a sealed memory file instead of the frame (shared.py): the tree is the same. The
decoder counts what it allocates (budget.py) and gives up past the limit it was given, on a reference to a node not
yet decoded (a cycle), on ints beyond CPython's int/str limit, on dicts and sets whose keys collide, and when its
``check`` (the step's deadline, a stop request) says so.
"""

from __future__ import annotations

from .decoding import Decoder, decode, decoded
from .encoding import Encoder, encode, fingerprint
from .plain import AgentValue, DecodeAbandoned, NotPlain, TooLarge, WireError, collisions

__all__ = [
    "AgentValue",
    "DecodeAbandoned",
    "Decoder",
    "Encoder",
    "NotPlain",
    "TooLarge",
    "WireError",
    "collisions",
    "decode",
    "decoded",
    "encode",
    "fingerprint",
]
