"""Every docstring the API reference renders has its lists laid out the way Sphinx reads them.

The API pages are autodoc with napoleon (``docs/conf.py``: numpy style). Two layouts render
garbled there, and both are checked on every public module, class, function, method and
property of ``optkit`` and ``optkit.formulations``:

* **a numpy section napoleon misreads.** In ``Parameters``, ``Other Parameters``,
  ``Attributes``, ``Returns``, ``Yields``, ``Raises`` and ``Warns`` every line at the section's
  indentation starts an entry and the lines indented under it are its description. An entry of
  a parameter list is ``name`` or ``name : type``, with ``name`` one of the object's parameters
  (or, under ``Attributes``, its attributes): ``name: text`` puts the text in the type slot
  (rendered as ``name (text)``), ``a, b`` prints one description twice, a continuation line
  that is not indented becomes an entry of its own. An entry of ``Returns`` or ``Yields`` is
  ``type`` or ``name : type``: a sentence there renders as an italic type. An entry of
  ``Raises`` or ``Warns`` is an exception's name.
* **a list written as lines ``name: text``** outside such a section (a dataclass's fields, an
  argument list in prose): reStructuredText joins consecutive lines into one paragraph, so two
  or more such lines naming the object's parameters or attributes in one paragraph render as a
  run-on sentence. Write them as a numpy section (one entry per name, its description
  indented) or as a bullet list.

A failure names the object and the line.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from typing import Any, Iterator

import pytest

import optkit
import optkit.formulations
from tests.needs import needs_modules

FIELD_SECTIONS = ("Parameters", "Other Parameters", "Attributes", "Keyword Arguments")
TYPE_SECTIONS = ("Returns", "Yields")
EXCEPTION_SECTIONS = ("Raises", "Warns")
# an identifier, a dotted name, a Sphinx role (:class:`~a.B`), or punctuation of a type expression
_NAME = r"~?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_TOKEN = re.compile(rf":\w+:`[^`]+`|{_NAME}|[\[\](),|]|\S")
_CONNECTORS = {"or", "of", "and", "optional", "default"}


def is_type(text: str) -> bool:
    """Whether ``text`` reads as a type expression (``int``, ``list of int or None``,
    ``dict[str, Any]``, ``:class:`~optkit.result.Result```), not as a sentence: only names, roles
    and ``[](),|``, and no two names in a row without ``or``/``of`` between them."""
    tokens = _TOKEN.findall(text.strip())
    if not tokens:
        return False
    prev_name = False
    for tok in tokens:
        if tok in "[](),|":
            prev_name = False
            continue
        if not re.fullmatch(rf":\w+:`[^`]+`|{_NAME}", tok):
            return False  # a full stop, a colon, a quote, a literal: prose
        if tok in _CONNECTORS:
            prev_name = False
            continue
        if prev_name:
            return False
        prev_name = True
    return True


class _Names:
    """The names an entry may document: the signature's parameters, and for a class its fields,
    annotations, attributes and those its methods set (``self.x = ...``, read from the source
    only when needed: ``inspect.getsource`` of a class parses its whole module)."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self.names: set[str] = set()
        try:
            self.names |= set(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            pass
        if inspect.isclass(obj):
            self.names |= set(dir(obj))
            for klass in obj.__mro__:
                self.names |= set(getattr(klass, "__annotations__", {}))
            if dataclasses.is_dataclass(obj):
                self.names |= {f.name for f in dataclasses.fields(obj)}
        self.read = not inspect.isclass(obj)

    def __contains__(self, name: object) -> bool:
        if name not in self.names and not self.read:
            self.read = True
            try:
                self.names |= set(re.findall(r"self\.(\w+)\s*(?::[^=\n]+)?=", inspect.getsource(self.obj)))
            except (OSError, TypeError):
                pass
        return name in self.names


def _sections(doc: str) -> Iterator[tuple[str, int, list[tuple[int, str]]]]:
    """Each numpy section: (title, its line's indentation, [(line number, line)] of its body)."""
    lines = doc.splitlines()
    i = 0
    while i < len(lines) - 1:
        m = re.fullmatch(r"(\s*)(\w[\w ]*\w|\w)\s*", lines[i])
        if m and re.fullmatch(rf"{m.group(1)}-{{3,}}\s*", lines[i + 1]):
            title, indent = m.group(2), len(m.group(1))
            body = []
            j = i + 2
            while j < len(lines):
                n = re.fullmatch(r"(\s*)(\w[\w ]*\w|\w)\s*", lines[j])
                if n and j + 1 < len(lines) and re.fullmatch(rf"{n.group(1)}-{{3,}}\s*", lines[j + 1]):
                    break
                body.append((j + 1, lines[j]))
                j += 1
            yield title, indent, body
            i = j
        else:
            i += 1


def section_problems(doc: str, obj: Any) -> list[str]:
    """The entries of ``doc``'s numpy sections that napoleon renders garbled, in words."""
    problems = []
    names = _Names(obj)
    for title, _, body in _sections(doc):
        code = [(n, ln) for n, ln in body if ln.strip()]
        if not code or title not in FIELD_SECTIONS + TYPE_SECTIONS + EXCEPTION_SECTIONS:
            continue
        base = min(len(ln) - len(ln.lstrip()) for _, ln in code)
        for n, ln in code:
            if len(ln) - len(ln.lstrip()) != base:
                continue
            entry = ln.strip()
            where = f"line {n} of {title}: {entry[:70]!r}"
            if title in FIELD_SECTIONS:
                m = re.fullmatch(r"((?:\\?\*){0,2}[A-Za-z_]\w*)(?: : (.+))?", entry)
                if m is None:
                    why = ("names several parameters: napoleon prints the description once for each"
                           if re.fullmatch(r"[\w*\\]+(, [\w*\\]+)+( : .+)?", entry)
                           else "is not `name` or `name : type` (a description goes on the lines under it)")
                    problems.append(f"{where} {why}")
                    continue
                if m.group(1).lstrip("\\*") not in names:
                    problems.append(f"{where} names no parameter or attribute of the object")
                if m.group(2) is not None and not is_type(m.group(2)):
                    problems.append(f"{where} has a sentence where the type goes")
            elif title in TYPE_SECTIONS:
                m = re.fullmatch(r"(?:[A-Za-z_]\w* : )?(.+)", entry)
                if m is None or not is_type(m.group(1)):
                    problems.append(f"{where} is not `type` or `name : type` (a sentence renders as an italic type)")
            elif not re.fullmatch(rf":\w+:`[^`]+`|{_NAME}", entry):
                problems.append(f"{where} is not an exception's name")
    return problems


_FIELD_LINE = re.compile(r"(\s*)(\*{0,2}[A-Za-z_]\w*(?:, \*{0,2}[A-Za-z_]\w*)*): \S")


def run_on_lists(doc: str, obj: Any) -> list[str]:
    """Paragraphs of ``doc`` with two or more lines ``name: text`` naming the object's parameters
    or attributes, at the paragraph's indentation (outside literal blocks and examples)."""
    names = _Names(obj)
    problems = []
    lines = doc.splitlines() + [""]
    para: list[tuple[int, str]] = []
    literal_indent: int | None = None
    for n, ln in enumerate(lines, 1):
        indent = len(ln) - len(ln.lstrip())
        if literal_indent is not None and ln.strip() and indent <= literal_indent:
            literal_indent = None
        if ln.strip() and literal_indent is None:
            para.append((n, ln))
            if ln.rstrip().endswith("::"):
                literal_indent, para = indent, []
            continue
        if para and not para[0][1].lstrip().startswith(">>>"):
            first = len(para[0][1]) - len(para[0][1].lstrip())
            hits = []
            for k, text in para:
                m = _FIELD_LINE.match(text)
                if m and len(m.group(1)) == first and all(x.lstrip("*") in names for x in m.group(2).split(", ")):
                    hits.append(k)
            if len(hits) >= 2:
                problems.append(f"lines {', '.join(map(str, hits))}: `name: text` lines render as one paragraph")
        para = []
    return problems


def documented() -> dict[str, Any]:
    """``{qualified name: object}`` of every public module, class, function, method and
    property of optkit and optkit.formulations (each object once, under its first name)."""
    modules = ["optkit", "optkit.formulations"]
    for package in (optkit, optkit.formulations):
        modules += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                    if not m.name.endswith("__main__")]
    found: dict[str, Any] = {}
    seen: set[int] = set()

    def add(name: str, obj: Any) -> None:
        if id(obj) not in seen:
            seen.add(id(obj))
            found[name if inspect.ismodule(obj) else f"{obj.__module__}.{obj.__qualname__}"] = obj

    for module_name in modules:
        module = importlib.import_module(module_name)
        add(module_name, module)
        for name, obj in vars(module).items():
            home = getattr(obj, "__module__", None) or ""
            if name.startswith("_") or not home.startswith("optkit") or not (inspect.isclass(obj)
                                                                             or inspect.isfunction(obj)):
                continue
            add(f"{module_name}.{name}", obj)
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    if member.startswith("_"):
                        continue
                    if isinstance(value, (staticmethod, classmethod)):
                        value = value.__func__
                    elif isinstance(value, property):
                        value = value.fget
                    if inspect.isfunction(value):
                        add(f"{module_name}.{name}.{member}", value)
    return found


@pytest.fixture(scope="module")
def documented_objects() -> dict[str, Any]:
    """:func:`documented`, once per module run (it imports every module of the package: at
    collection time it cost every pytest-xdist worker, whether or not it runs this file)."""
    return documented()


# Docstrings in files other branches are rewriting at the same time; each entry says where the
# fix goes. Remove an entry when its branch is merged.
PENDING: dict[str, str] = {}


def test_every_docstring_lays_out_its_lists_as_sphinx_reads_them(documented_objects: dict[str, Any]) -> None:
    assert {"optkit.worst_case.worst_case", "optkit.testing._within.assert_within", "optkit.harness.compare.compare",
            "optkit.formulations.gpu_mapping.place.JobPlacement", "optkit.online"} <= set(documented_objects)
    bad = {}
    for name, obj in documented_objects.items():
        doc = inspect.getdoc(obj) if not inspect.ismodule(obj) else inspect.cleandoc(obj.__doc__ or "")
        if not doc or name in PENDING:
            continue
        problems = section_problems(doc, obj) + ([] if inspect.ismodule(obj) else run_on_lists(doc, obj))
        if problems:
            bad[name] = problems
    assert not bad, "\n".join(f"{name}: {p}" for name, ps in bad.items() for p in ps)
    for name in PENDING:
        assert name in documented_objects, f"{name} is gone: remove it from PENDING"


def _example(a: int, b: float, *, c: str = "", **kw: Any) -> float:  # what the crafted docstrings document
    return a * b


GARBLED = {
    "name: text": ("Parameters\n----------\na: the first.\n", "is not `name` or `name : type`"),
    "two names": ("Parameters\n----------\na, b\n    The factors.\n", "names several parameters"),
    "no such parameter": ("Parameters\n----------\nd\n    Nothing.\n", "names no parameter"),
    "prose type": ("Parameters\n----------\na : the first factor\n    Text.\n", "a sentence where the type goes"),
    "unindented continuation": ("Parameters\n----------\na\n    The first factor, which\nis an integer.\n",
                                "is not `name` or `name : type`"),
    "prose return": ("Returns\n-------\nThe product, in the units of b.\n", "is not `type` or `name : type`"),
    "prose raise": ("Raises\n------\nValueError when a is negative.\n", "is not an exception's name"),
}


@pytest.mark.parametrize("case", sorted(GARBLED))
def test_the_checks_name_each_garbled_layout(case: str) -> None:
    doc, message = GARBLED[case]
    problems = section_problems("Multiply.\n\n" + doc, _example)
    assert len(problems) == 1 and message in problems[0], problems


def test_the_checks_pass_the_layouts_that_render_well() -> None:
    doc = ("Multiply.\n\nParameters\n----------\na\n    The first factor: an integer.\n\n    b: the second.\n"
           "b : float, optional\n    The second.\n\\*\\*kw\n    Nothing.\nc : :class:`str` or None\n\n"
           "Returns\n-------\nfloat\n    The product.\nproduct : dict[str, list of int]\n\n"
           "Raises\n------\noptkit.errors.InputError\n    a < 0.\n\nNotes\n-----\nGuarantee: none.\n"
           "Units: seconds.\n")
    assert section_problems(doc, _example) == []
    assert run_on_lists(doc, _example) == []
    assert run_on_lists("Fields:\n\na: the first.\nb: the second.\n", _example) == [
        "lines 3, 4: `name: text` lines render as one paragraph"]
    # a literal block, an example, and one such line per paragraph are left alone
    assert run_on_lists("Like this::\n\n    a: 1\n    b: 2\n\n>>> a: int = 1\n>>> b: int = 2\n\n"
                        "a: the first.\n\nb: the second.\n", _example) == []
    assert is_type("list of int or None") and is_type("dict[str, Any]") and is_type(":class:`~a.B`")
    assert not is_type("formulation name") and not is_type("seconds.") and not is_type("``{v: s}``")


def test_napoleon_renders_the_garbled_layouts_as_the_checks_say() -> None:
    """The checks' premise, on napoleon itself: ``name: text`` puts the text in the type slot,
    ``a, b`` repeats the description, a sentence under Returns becomes the type."""
    needs_modules("sphinx")
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import NumpyDocstring

    config = Config(napoleon_google_docstring=False, napoleon_numpy_docstring=True, napoleon_use_rtype=False)

    def render(doc: str) -> list[str]:
        return NumpyDocstring("Multiply.\n\n" + doc, config, what="function", obj=_example).lines()

    assert ":type a: the first." in render(GARBLED["name: text"][0])
    assert sum(ln.count("The factors.") for ln in render(GARBLED["two names"][0])) == 2
    assert ":returns: *The product, in the units of b.*" in render(GARBLED["prose return"][0])
    good = render("Parameters\n----------\na\n    The first factor: an integer.\n")
    assert ":param a: The first factor: an integer." in good and not any(ln.startswith(":type") for ln in good)
