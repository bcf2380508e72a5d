"""Building blocks shared by every sample model: the frozen record base and the
source status that replaces exceptions inside a tick."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Self, TypeVar, dataclass_transform

from pydantic import BaseModel, ConfigDict
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, SchemaSerializer, SchemaValidator

S = TypeVar("S", bound="Struct")


class Record(BaseModel):
    """Immutable, strict record: configuration, endpoints, findings. (The tick's data,
    made and dropped by the million in a re-run, are Structs instead.)"""

    model_config = ConfigDict(frozen=True, extra="forbid")


_STRUCT_CONFIG = ConfigDict(extra="forbid")
"""Without ``use_attribute_docstrings``: nothing reads a Struct field's description, and
pydantic parsed each Struct's module source for them as the class was made (~30 ms of
every command's start, 11 % of importing the CLI and building the engine, measured)."""


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
def struct(cls: type[S]) -> type[S]:
    """Make ``cls`` (a Struct subclass) a frozen, slotted, validating pydantic dataclass.

    The tick's building blocks are these rather than pydantic BaseModels: a re-run of
    the checks over a day's recording creates and frees some 8 million of them (93 a
    tick), and a slotted instance is about a tenth of a BaseModel's size (no
    ``__dict__``, no fields-set), reads its fields twice as fast, and is freed sooner."""
    out = pydantic_dataclass(frozen=True, slots=True, kw_only=True, config=_STRUCT_CONFIG)(cls)
    fields: dict[str, FieldInfo] = out.__pydantic_fields__
    names = tuple(fields)
    out.model_fields = fields  # type: ignore[attr-defined]
    out._field_names = names  # type: ignore[attr-defined]
    out.trusted = classmethod(_trusted_constructor(out, fields))  # type: ignore[attr-defined]
    out._replace = _replacer(out, names)  # type: ignore[attr-defined]
    return out  # type: ignore[return-value]


def _trusted_constructor(cls: type, fields: dict[str, FieldInfo]) -> Callable[..., Any]:
    """``cls.trusted``, written out for ``cls``'s fields as Python source and compiled
    once, as the dataclasses module writes a class's ``__init__``: one keyword parameter
    a field (its default, or a marker for a default factory), then one slot setter call
    a field::

        def trusted(__cls, *, ip=__default0, port=__default1, routes=__MISSING):
            __self = __new(__cls)
            __set0(__self, ip)
            __set1(__self, port)
            __set2(__self, __factory2() if routes is __MISSING else routes)
            return __self

    A loop over the fields doing the same (name lookups in the keywords, a branch for
    each kind of default) cost more than pydantic's validation it was meant to skip:
    per record, µs, loop / this / validation: MysqlSample 3.6 / 1.7 / 6.4,
    RedisSample 8.4 / 4.3 / 6.0, HostRates 4.9 / 2.2 / 3.3, NodeTick 1.1 / 0.5 / 0.9.
    An unknown or missing field is Python's own TypeError for a call."""
    env: dict[str, Any] = {"__new": object.__new__, "__MISSING": _MISSING}
    params: list[str] = []
    body: list[str] = ["    __self = __new(__cls)"]
    for i, (name, f) in enumerate(fields.items()):
        assert not name.startswith("__"), name  # the generated code's own names start so
        env[f"__set{i}"] = getattr(cls, name).__set__
        value = name
        if f.default_factory is not None:
            env[f"__factory{i}"] = _trusted_factory(f.default_factory)
            params.append(f"{name}=__MISSING")
            value = f"__factory{i}() if {name} is __MISSING else {name}"
        elif f.default is PydanticUndefined:
            params.append(name)
        else:
            env[f"__default{i}"] = f.default
            params.append(f"{name}=__default{i}")
        body.append(f"    __set{i}(__self, {value})")
    star = ", *, " if params else ""
    source = "\n".join([f"def trusted(__cls{star}{', '.join(params)}):", *body,
                        "    return __self"])
    exec(source, env)  # noqa: S102 (our own text, from the class's field names)
    fn: Callable[..., Any] = env["trusted"]
    fn.__qualname__ = f"{cls.__name__}.trusted"
    fn.__doc__ = Struct.trusted.__doc__
    return fn


def _trusted_factory(factory: Callable[..., Any]) -> Callable[..., Any]:
    """What ``trusted`` calls for a field left out: a ``@struct`` record class's own
    ``trusted`` rather than its validating constructor. Called with no values, both
    build the record of its defaults (pydantic does not validate defaults), so the
    result is the same; the constructor's validation cost ~1 µs each time a source's
    sample took its default ``status`` (``SourceStatus``), ~1 % of serve's busy time at
    200 pairs."""
    if isinstance(factory, type) and issubclass(factory, Struct) and "trusted" in vars(factory):
        return factory.trusted
    return factory


_MISSING = object()
"""A ``trusted`` keyword left out whose field has a default factory."""
_NO_CHANGES: Mapping[str, Any] = MappingProxyType({})


def _replacer(cls: type, names: tuple[str, ...]) -> Callable[[Any, Mapping[str, Any]], Any]:
    """``cls._replace(obj, changes)``: a shallow copy of ``obj`` with ``changes`` set over
    it (names not checked), written out for ``cls``'s fields as ``trusted`` is::

        def replace(__obj, __changes):
            __self = __new(__cls)
            __set0(__self, __obj.ip)
            __set1(__self, __obj.port)
            for __name, __value in __changes.items():
                __setattr(__self, __name, __value)
            return __self

    Each field is set through its slot's own descriptor (a frozen dataclass's
    __setattr__ refuses). ``model_copy`` and the engine's thinning (model/parts.py) copy
    records every tick; a loop over the values (an attrgetter's tuple zipped with the
    setters) cost, µs: a Tick 1.27 -> 0.62, a RedisSample 3.89 -> 2.13."""
    env: dict[str, Any] = {"__new": object.__new__, "__setattr": object.__setattr__,
                           "__cls": cls}
    body = ["def replace(__obj, __changes):", "    __self = __new(__cls)"]
    for i, name in enumerate(names):
        env[f"__set{i}"] = getattr(cls, name).__set__
        body.append(f"    __set{i}(__self, __obj.{name})")
    body += ["    for __name, __value in __changes.items():",
             "        __setattr(__self, __name, __value)",
             "    return __self"]
    exec("\n".join(body), env)  # noqa: S102 (our own text, from the class's field names)
    fn: Callable[[Any, Mapping[str, Any]], Any] = env["replace"]
    fn.__qualname__ = f"{cls.__name__}._replace"
    return fn


def fill_fresh(record: S, changes: Mapping[str, Any]) -> S:
    """``record`` with ``changes`` set on it IN PLACE, returned: what
    ``record.model_copy(update=changes)`` reads as, without copying every field (names
    not checked, values not validated, as with ``model_copy``).

    ONLY for a record its caller has just built and that nothing else holds yet: a
    source's sample between its parser and ``Source._finish`` (``Source.fresh_samples``).
    Everyone else reads records as immutable; changing one already handed out (kept in a
    window, a recording's buffer, a cache) would rewrite what they saw. A copy of a
    RedisSample (69 fields) cost ~2 µs, a MysqlSample's or HostSample's ~1 µs; a pair-tick
    made six of them in ``_finish`` alone."""
    for name, value in changes.items():
        _setattr(record, name, value)  # the slot's descriptor (frozen: its __setattr__ refuses)
    return record


_setattr = object.__setattr__


class Struct:
    """Immutable, validated record of tick data (samples, rates, statuses); every
    subclass is decorated with ``@struct``. It keeps the BaseModel methods replmon
    uses (``model_validate(_json)``, ``model_dump(_json)``, ``model_copy``,
    ``model_fields``), so code reads the same for both kinds of model."""

    __slots__ = ()
    model_fields: ClassVar[dict[str, FieldInfo]]
    _field_names: ClassVar[tuple[str, ...]]
    _replace: ClassVar[Callable[[Any, Mapping[str, Any]], Any]]
    __pydantic_validator__: ClassVar[SchemaValidator]
    __pydantic_serializer__: ClassVar[SchemaSerializer]

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        return cls.__pydantic_validator__.validate_python(obj)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, data: str | bytes) -> Self:
        return cls.__pydantic_validator__.validate_json(data)  # type: ignore[no-any-return]

    def model_dump(self, *, mode: Literal["python", "json"] = "python",
                   **kw: Any) -> dict[str, Any]:
        """As BaseModel.model_dump (``exclude``, ``include``, ``exclude_none``...)."""
        out = self.__pydantic_serializer__.to_python(self, mode=mode, **kw)
        return out  # type: ignore[no-any-return]

    def model_dump_json(self, *, indent: int | None = None, **kw: Any) -> str:
        return self.__pydantic_serializer__.to_json(self, indent=indent, **kw).decode()

    @classmethod
    def trusted(cls, **values: Any) -> Self:
        """A record of ``values`` WITHOUT validation, the other fields at their defaults.

        Only for values replmon's own code has just built with the fields' exact types
        (a parser's ints, floats, strs, records: an int where the field says float is
        NOT turned into a float here, as validation would). Outside data (a recording
        read back, a config, a server's reply not yet typed) goes through the
        constructor or ``model_validate``. A host sample's ~20 records cost ~1 µs each
        to validate: most of what is left of building it once its files are parsed.
        An unknown or missing required field raises TypeError, as the constructor
        would.

        (Each ``@struct`` class gets its own, written out for its fields:
        ``_trusted_constructor``; this body is what a class not made by ``@struct``
        would run.)"""
        raise TypeError(f"{cls.__name__} is not decorated with @struct")

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy with ``update``'s fields replaced (not validated, as with
        BaseModel.model_copy)."""
        cls = type(self)
        if not update:
            return cls._replace(self, _NO_CHANGES)  # type: ignore[no-any-return]
        fields = cls.model_fields
        for name in update:
            if name not in fields:
                raise TypeError(f"{cls.__name__} has no field {name!r}")
        return cls._replace(self, update)  # type: ignore[no-any-return]


class SourceState(StrEnum):
    """What happened when a source tried to sample its node."""

    OK = "ok"
    """Fresh data in this sample."""
    UNREACHABLE = "unreachable"
    """Connection refused, host unknown, network down, or a file/command missing on a node
    that should have it."""
    AUTH = "auth"
    """Credentials refused (wrong password, unknown user, missing privilege to connect)."""
    TIMEOUT = "timeout"
    """The source did not answer within its per-source timeout (a hung server)."""
    ABSENT = "absent"
    """The node does not have this source at all (no DRBD on this host) or it is switched off."""
    PARSE_ERROR = "parse_error"
    """The source answered, but with text replmon could not read (garbled /proc/drbd, INFO)."""
    ERROR = "error"
    """Any other failure; the error text says what."""


@struct
class SourceStatus(Struct):
    """Outcome of one sampling attempt."""

    state: SourceState = SourceState.OK
    error: str | None = None
    """Error text for anything but ok; never contains a password."""
    hint: str | None = None
    """What the user can do about it (e.g. the GRANT that is missing)."""
    since: float | None = None
    """Wall-clock time (epoch seconds) at which the source entered this state."""

    @property
    def ok(self) -> bool:
        return self.state is SourceState.OK


@struct
class SampleBase(Struct):
    """Fields every source sample carries. Payload fields of a sample are
    empty/None unless ``status.state`` is ok (or, for partial data, documented per field)."""

    status: SourceStatus = field(default_factory=SourceStatus)
    wall: float = 0.0
    """Epoch seconds when the reading was taken."""
    mono: float = 0.0
    """time.monotonic() seconds when the reading was taken; rates divide by differences of this."""
    elapsed_ms: float = 0.0
    """How long the fetch took, milliseconds."""
