"""The semantics table: every construct gives the same output, prints and exception as CPython running the same code."""

from __future__ import annotations

import pytest
from sandbox_helpers import run_native, run_sandboxed

CASES: dict[str, str] = {
    # --- expressions and basics
    "arithmetic": "print(7 // 2, -7 // 2, 7 % -3, 2 ** -1, divmod(17, 5), round(2.675, 2), abs(-3j))\n1 + 2 * 3",
    "big integers": "x = 3 ** 200\nprint(x % 1000007, len(str(x)))\nx.bit_length()",
    "chained comparison": "a = 5\nprint(1 < a <= 5, 1 < a > 7, a == 5 != 6)",
    "ternary and boolean ops": "x = 0\nprint(x or 'default', x and 1/0, 'y' if x else 'n', not x)",
    "strings": "s = 'Hello, World'\nprint(s.lower(), s[::-1], s.split(', '), s.find('W'), s.center(16, '*'))\ns * 2",
    "percent formatting": "print('%5.2f|%-4d|%s|%r|%(k)s' % (3.14159, 42, 'x', 'y', ) if False else '%(k)s' % {'k': 1})",
    "bytes and sets": "b = b'abc' + bytes([100])\ns = {1, 2, 3} ^ {3, 4}\nprint(b, b.hex(), sorted(s), frozenset('aab'))",
    "slicing and star unpack": "a, *b, c = range(6)\n(x, (y, *z)) = 1, (2, 3, 4)\nprint(a, b, c, x, y, z, [1, 2, 3][-2:])",
    "augmented assignment targets": (
        "d = {'k': 1}\nd['k'] += 2\nl = [1, 2]\nl *= 2\nl[0] **= 3\n"
        "class C: pass\nc = C()\nc.n = 3\nc.n *= 4\nc.n <<= 1\nprint(d, l, c.n)"
    ),
    "walrus": "data = [1, 5, 12, 7]\nif (n := len(data)) > 3:\n    print(n)\nprint([y for x in data if (y := x * 2) > 9], y)",
    "del and rebinding": "x = 1\ndel x\ntry:\n    x\nexcept NameError as e:\n    print('gone', e)",
    # --- f-strings
    "f-string conversions": "v = 'h\\u00e9'\nprint(f'{v!r} {v!s} {v!a} {3.14159:.2f} {42:>6} {255:#x} {1e6:,.0f}')",
    "f-string nested and debug": "width, x = 8, 3.5\nprint(f'[{x:{width}.3f}]', f'{x=}', f'{x * 2 = :.1f}')",
    "str.format legit": (
        "class P:\n    def __init__(self): self.x = 1\n"
        "print('{} {name} {0}'.format('a', name='n'), '{p.x} {d[k]}'.format(p=P(), d={'k': 2}))\n"
        "'{a}-{b}'.format_map({'a': 1, 'b': 2})"
    ),
    # --- control flow
    "for-else and while-else": (
        "for i in range(3):\n    pass\nelse:\n    print('for else', i)\n"
        "for i in range(3):\n    if i == 1: break\nelse:\n    print('not printed')\n"
        "n = 0\nwhile n < 3:\n    n += 1\nelse:\n    print('while else', n)"
    ),
    "break continue nested": (
        "out = []\nfor i in range(4):\n    for j in range(4):\n        if j == i: break\n        if j % 2: continue\n"
        "        out.append((i, j))\nout"
    ),
    "match literal/sequence/mapping": (
        "def f(x):\n    match x:\n        case 0 | 1: return 'small'\n        case [a, *rest]: return f'seq {a} {rest}'\n"
        "        case {'k': v, **others}: return f'map {v} {others}'\n        case str() as s if len(s) > 2: return 'long'\n"
        "        case _: return 'other'\n[f(0), f([1, 2, 3]), f({'k': 1, 'z': 2}), f('abcd'), f('a')]"
    ),
    "match class patterns": (
        "from dataclasses import dataclass\n@dataclass\nclass Pt:\n    x: int\n    y: int\n"
        "def where(p):\n    match p:\n        case Pt(x=0, y=0): return 'origin'\n        case Pt(0, y): return f'y={y}'\n"
        "        case Pt(x, y) if x == y: return 'diag'\n        case _: return 'else'\n"
        "[where(Pt(0, 0)), where(Pt(0, 5)), where(Pt(2, 2)), where(Pt(1, 3))]"
    ),
    "match value, class and mapping patterns on later-defined names": (
        "def kind(x):\n    match x:\n        case Color.RED: return 'red'\n        case Shape(sides=4): return 'square'\n"
        "        case {Keys.A: v}: return v\n        case _: return None\n"
        "class Color:\n    RED = 1\nclass Keys:\n    A = 'a'\nclass Shape:\n    def __init__(self, n): self.sides = n\n"
        "[kind(1), kind(Shape(4)), kind({'a': 9}), kind(3)]"
    ),
    "assert": "assert 1 + 1 == 2, 'math'\nassert False, 'boom'",
    # --- functions
    "defaults kwonly posonly": (
        "def f(a, b=2, /, c=3, *args, d, e=5, **kw):\n    return (a, b, c, args, d, e, kw)\n"
        "print(f(1, d=4))\nf(1, 2, 3, 4, 5, d=6, z=7)"
    ),
    "keyword-only defaults error": "def f(*, x=1): return x\nf(2)",
    "mutable default": "def f(x, acc=[]):\n    acc.append(x)\n    return acc\nf(1)\nf(2)",
    "closures and nonlocal": (
        "def counter():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n        return n\n    return inc\n"
        "c = counter()\nc(); c()\nc()"
    ),
    "global statement": "total = 0\ndef add(x):\n    global total\n    total += x\nadd(3)\nadd(4)\ntotal",
    "global created in function": "def make():\n    global made\n    made = 'yes'\nmake()\nmade",
    "recursion": "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\nfact(30)",
    "lambda and sorting": "people = [('bob', 30), ('al', 25), ('cy', 30)]\nsorted(people, key=lambda p: (-p[1], p[0]))",
    "lambda late binding": "fs = [lambda: i for i in range(3)]\ngs = [lambda i=i: i for i in range(3)]\n[f() for f in fs], [g() for g in gs]",
    "decorators": (
        "import functools\ndef twice(f):\n    @functools.wraps(f)\n    def w(*a):\n        return f(f(*a))\n    return w\n"
        "def tag(t):\n    def deco(f):\n        f.tag = t\n        return f\n    return deco\n"
        "@tag('x')\n@twice\ndef inc(v):\n    'doc'\n    return v + 1\nprint(inc(1), inc.__name__, inc.__doc__, inc.tag)"
    ),
    "lru_cache recursion": (
        "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef fib(n):\n    return n if n < 2 else fib(n-1) + fib(n-2)\n"
        "fib(80)"
    ),
    "functools and operator": (
        "import functools, operator\np = functools.partial(pow, 2)\n"
        "print(p(10), functools.reduce(operator.mul, range(1, 6)), operator.itemgetter(1)('abc'))"
    ),
    "generators": (
        "def gen(n):\n    for i in range(n):\n        x = yield i\n        if x: print('got', x)\n    return 'done'\n"
        "g = gen(3)\nprint(next(g), g.send('hi'), list(g))\n"
        "def outer():\n    r = yield from gen(2)\n    yield r\nlist(outer())"
    ),
    "generator close and finally": (
        "def g():\n    try:\n        yield 1\n        yield 2\n    finally:\n        print('cleanup')\nx = g()\nnext(x)\nx.close()"
    ),
    "genexp and builtins": "print(sum(x * x for x in range(10)), any(c.isdigit() for c in 'ab3'), max('abc', key=ord))",
    "stopiteration in generator": "def g():\n    yield 1\n    raise StopIteration\nlist(g())",
    # --- comprehensions
    "comprehensions": (
        "m = [[1, 2, 3], [4, 5, 6]]\nprint([list(r) for r in zip(*m)], {k: v for k, v in zip('ab', (1, 2))}, "
        "{x % 3 for x in range(10)})\n[(i, j) for i in range(3) for j in range(i) if j]"
    ),
    "comprehension closures": "fs = [(lambda x, k=k: x * k) for k in range(3)]\n[f(10) for f in fs]",
    "comprehension scope": "x = 'outer'\nys = [x for x in range(3)]\nx",
    # --- classes
    "class basics": (
        "class Animal:\n    kind = 'animal'\n    def __init__(self, name):\n        self.name = name\n"
        "    def speak(self):\n        return f'{self.name} makes a sound'\n    def __repr__(self):\n        return f'Animal({self.name!r})'\n"
        "class Dog(Animal):\n    def speak(self):\n        return super().speak() + ' (woof)'\n"
        "d = Dog('rex')\nprint(d.speak(), repr(d), Dog.kind, isinstance(d, Animal), Dog.__name__, type(d).__name__)"
    ),
    "properties and class/static methods": (
        "class T:\n    def __init__(self): self._c = 0\n    @property\n    def c(self): return self._c\n"
        "    @c.setter\n    def c(self, v): self._c = max(0, v)\n    @classmethod\n    def make(cls): return cls()\n"
        "    @staticmethod\n    def add(a, b): return a + b\nt = T.make()\nt.c = -5\nt.c = 7\n(t.c, T.add(1, 2))"
    ),
    "private name mangling": (
        "class A:\n    def __init__(self):\n        self.__secret = 42\n    def reveal(self):\n        return self.__secret\n"
        "a = A()\nprint(a.reveal(), hasattr(a, '__secret'))"
    ),
    "operator overloading": (
        "class V:\n    def __init__(self, x, y): self.x, self.y = x, y\n    def __add__(self, o): return V(self.x + o.x, self.y + o.y)\n"
        "    def __mul__(self, k): return V(self.x * k, self.y * k)\n    def __eq__(self, o): return (self.x, self.y) == (o.x, o.y)\n"
        "    def __hash__(self): return hash((self.x, self.y))\n    def __repr__(self): return f'V({self.x}, {self.y})'\n"
        "    def __len__(self): return 2\n    def __getitem__(self, i): return (self.x, self.y)[i]\n"
        "v = V(1, 2) + V(3, 4) * 2\nprint(v, v == V(7, 10), len({v, V(7, 10)}), list(v))"
    ),
    "iterator and context manager protocols": (
        "class Count:\n    def __init__(self, n): self.n = n\n    def __iter__(self): return self\n"
        "    def __next__(self):\n        if self.n == 0: raise StopIteration\n        self.n -= 1\n        return self.n\n"
        "class CM:\n    def __enter__(self): print('enter'); return self\n"
        "    def __exit__(self, *exc): print('exit', exc[0].__name__ if exc[0] else None); return True\n"
        "with CM():\n    raise ValueError('swallowed')\nlist(Count(3))"
    ),
    "dataclasses": (
        "from dataclasses import dataclass, field, asdict\n@dataclass(order=True)\nclass Item:\n    name: str\n"
        "    qty: int = 0\n    tags: list = field(default_factory=list)\n    def __post_init__(self): self.name = self.name.title()\n"
        "a = Item('apple', 3)\nprint(a, asdict(a), Item('b') < Item('c'))\nsorted([Item('z', 1), Item('a', 2)])"
    ),
    "enum": (
        "from enum import Enum, auto\nclass Color(Enum):\n    RED = auto()\n    GREEN = auto()\n"
        "print(Color.RED, Color(2), [c.name for c in Color], Color.RED.value)\nColor.__members__['GREEN']"
    ),
    "abc and slots": (
        "from abc import ABC, abstractmethod\nclass Shape(ABC):\n    @abstractmethod\n    def area(self): ...\n"
        "class Sq(Shape):\n    __slots__ = ('s',)\n    def __init__(self, s): self.s = s\n    def area(self): return self.s ** 2\n"
        "print(Sq(3).area())\nShape()"
    ),
    "metaclass and init_subclass": (
        "registry = []\nclass Base:\n    def __init_subclass__(cls, **kw):\n        super().__init_subclass__(**kw)\n"
        "        registry.append(cls.__name__)\nclass A(Base): pass\nclass B(A): pass\n"
        "class Meta(type):\n    def __new__(mcs, name, bases, ns):\n        ns['added'] = True\n        return super().__new__(mcs, name, bases, ns)\n"
        "class C(metaclass=Meta): pass\nprint(registry, C.added)"
    ),
    "class decorator and class attributes": (
        "def register(cls):\n    cls.registered = True\n    return cls\n@register\nclass K:\n    count = 0\n"
        "    def __init__(self):\n        K.count += 1\nK(); K()\n(K.count, K.registered)"
    ),
    "namedtuple and typing.NamedTuple": (
        "from collections import namedtuple\nfrom typing import NamedTuple\nP = namedtuple('P', 'x y')\n"
        "class Q(NamedTuple):\n    a: int\n    b: str = 'z'\np = P(1, 2)\nprint(p._asdict(), p._replace(x=5), P._fields, Q(1))"
    ),
    "callable objects": "class Adder:\n    def __init__(self, n): self.n = n\n    def __call__(self, x): return x + self.n\nlist(map(Adder(10), [1, 2]))",
    # --- exceptions
    "try except else finally": (
        "def f(x):\n    try:\n        r = 10 / x\n    except ZeroDivisionError as e:\n        print('err', e)\n        return None\n"
        "    else:\n        print('ok')\n        return r\n    finally:\n        print('finally')\nprint(f(2), f(0))"
    ),
    "custom exceptions and raise from": (
        "class AppError(Exception):\n    pass\ntry:\n    try:\n        {}['k']\n    except KeyError as e:\n"
        "        raise AppError('wrapped') from e\nexcept AppError as e:\n    print(type(e).__name__, e, type(e.__cause__).__name__)"
    ),
    "exception groups and except*": (
        "try:\n    raise ExceptionGroup('g', [ValueError(1), TypeError(2), ValueError(3)])\nexcept* ValueError as eg:\n"
        "    print('values', len(eg.exceptions))\nexcept* TypeError as eg:\n    print('types', len(eg.exceptions))"
    ),
    "uncaught error type": "x = {'a': 1}\nx['b']",
    "name error": "print(undefined_variable_name)",
    "finally overrides return": "def f():\n    try:\n        return 1\n    finally:\n        print('fin')\nf()",
    "contextlib": (
        "from contextlib import contextmanager, suppress\n@contextmanager\ndef tag(n):\n    print('<' + n + '>')\n"
        "    yield n.upper()\n    print('</' + n + '>')\nwith tag('b') as t:\n    print(t)\nwith suppress(KeyError):\n    {}['x']\n'after'"
    ),
    # --- async
    "async def and asyncio.run": (
        "import asyncio\nasync def work(i):\n    await asyncio.sleep(0.01)\n    return i * 2\n"
        "async def main():\n    return await asyncio.gather(*(work(i) for i in range(3)))\nasyncio.run(main())"
    ),
    "async for / async with / tasks": (
        "import asyncio\nasync def agen(n):\n    for i in range(n):\n        yield i\n"
        "class ACM:\n    async def __aenter__(self): return 'in'\n    async def __aexit__(self, *a): return False\n"
        "async def main():\n    async with ACM() as v:\n        items = [x async for x in agen(3)]\n"
        "    t = asyncio.create_task(asyncio.sleep(0, 'done'))\n    return v, items, await t\nasyncio.run(main())"
    ),
    # --- standard library in the base set
    "collections": (
        "from collections import Counter, defaultdict, deque, OrderedDict\nc = Counter('abracadabra')\n"
        "d = defaultdict(list)\nd['x'].append(1)\nq = deque([1, 2, 3], maxlen=3)\nq.append(4)\n"
        "print(c.most_common(2), dict(d), list(q), list(OrderedDict(b=1, a=2)))"
    ),
    "itertools and math": (
        "import itertools, math\nprint(list(itertools.islice(itertools.count(5), 3)), list(itertools.permutations('ab')),"
        " math.gcd(12, 18), math.isclose(math.sqrt(2) ** 2, 2), math.comb(10, 3), math.factorial(10))"
    ),
    "re and datetime": (
        "import re, datetime\nm = re.search(r'(\\d+)-(\\d+)', 'range 10-20')\nd = datetime.date(2024, 2, 28) + datetime.timedelta(days=2)\n"
        "print(m.groups(), re.sub(r'\\s+', ' ', 'a   b\\tc'), d.isoformat(), d.strftime('%A'))"
    ),
    "statistics and random seeded": (
        "import statistics, random\nrandom.seed(7)\nprint(statistics.mean([1, 2, 3, 4]), statistics.median([3, 1, 2]), "
        "random.randint(1, 100), random.choice('abc'))"
    ),
    "fractions decimal json": (
        "from fractions import Fraction\nfrom decimal import Decimal\nimport json\n"
        "print(Fraction(1, 3) + Fraction(1, 6), Decimal('0.1') + Decimal('0.2'), json.dumps({'a': [1, 2]}, sort_keys=True))"
    ),
    "heapq bisect textwrap": (
        "import heapq, bisect, textwrap\nh = [5, 1, 3]\nheapq.heapify(h)\nprint(heapq.heappop(h), bisect.bisect([1, 3, 5], 4), "
        "textwrap.shorten('hello world again', 12))"
    ),
    # --- printing, iteration details
    "print options": "print('a', 'b', sep='-', end='!\\n')\nprint(*[1, 2, 3])\nprint()",
    "dict ordering and mutation error": "d = {'a': 1, 'b': 2}\nfor k in d:\n    d['c'] = 3",
    "sequence protocol iteration": "class S:\n    def __getitem__(self, i):\n        if i > 2: raise IndexError\n        return i * 10\nlist(S())",
    "type hints and annotations": (
        "from typing import Optional\nx: int = 5\ny: list[int]\ndef f(a: int, b: Optional[str] = None) -> str:\n"
        "    return f'{a}{b}'\nprint(f(x), f.__annotations__['return'])"
    ),
    "future annotations": "from __future__ import annotations\ndef f(x: UndefinedType) -> int:\n    return 1\nf.__annotations__",
    "hasattr getattr setattr": (
        "class O: pass\no = O()\nsetattr(o, 'v', 3)\nprint(hasattr(o, 'v'), getattr(o, 'missing', 'dflt'), getattr(o, 'v'))\ndelattr(o, 'v')\nhasattr(o, 'v')"
    ),
    "integer loop accumulations": "total = 0\nfor i in range(1000):\n    if i % 3 == 0 or i % 5 == 0:\n        total += i\ntotal",
    "string building loop": "parts = []\ni = 0\nwhile len(parts) < 5:\n    parts.append(str(i) * i)\n    i += 1\n'-'.join(parts)",
    "module docstring and trailing expression": "'''A module docstring.'''\nx = [1, 2]\nx[0], x[-1]",
    "underscore throwaway": "for _ in range(2):\n    pass\na, _ = (1, 2)\nprint(a, _)",
}


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("name", list(CASES))
def test_same_as_cpython(name: str) -> None:
    code = CASES[name]
    native = run_native(code)
    sandboxed = run_sandboxed(code)
    assert sandboxed.error == native.error, f"{name}: sandbox raised {sandboxed.error}, CPython raised {native.error}"
    assert sandboxed.logs == native.logs
    assert repr(sandboxed.value) == repr(native.value)
