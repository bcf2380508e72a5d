"""Building blocks shared by every sample model: the frozen record base and the
source status that replaces exceptions inside a tick."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from enum import StrEnum
from operator import attrgetter
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


_STRUCT_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)


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
    # model_copy and trusted: every field's value read in one C call, set through its
    # slot's own descriptor (a frozen dataclass's __setattr__ refuses)
    out._read_all = attrgetter(*names) if len(names) > 1 else (  # type: ignore[attr-defined]
        lambda obj: (getattr(obj, names[0]),) if names else ())
    out._setters = tuple(getattr(out, n).__set__ for n in names)  # type: ignore[attr-defined]
    out._plan = tuple(  # type: ignore[attr-defined]
        (n, getattr(out, n).__set__, f.default, f.default_factory) for n, f in fields.items())
    return out  # type: ignore[return-value]


class Struct:
    """Immutable, validated record of tick data (samples, rates, statuses); every
    subclass is decorated with ``@struct``. It keeps the BaseModel methods replmon
    uses (``model_validate(_json)``, ``model_dump(_json)``, ``model_copy``,
    ``model_fields``), so code reads the same for both kinds of model."""

    __slots__ = ()
    model_fields: ClassVar[dict[str, FieldInfo]]
    _field_names: ClassVar[tuple[str, ...]]
    _read_all: ClassVar[Callable[[Any], tuple[Any, ...]]]
    _setters: ClassVar[tuple[Callable[[Any, Any], None], ...]]
    _plan: ClassVar[tuple[tuple[str, Callable[[Any, Any], None], Any, Any], ...]]
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
        would."""
        new = object.__new__(cls)
        used = 0
        for name, setter, default, factory in cls._plan:
            if name in values:
                setter(new, values[name])
                used += 1
            elif factory is not None:
                setter(new, factory())
            elif default is PydanticUndefined:
                raise TypeError(f"{cls.__name__}: missing field {name!r}")
            else:
                setter(new, default)
        if used != len(values):
            unknown = sorted(set(values) - set(cls.model_fields))
            raise TypeError(f"{cls.__name__} has no field {unknown[0]!r}")
        return new

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy with ``update``'s fields replaced (not validated, as with
        BaseModel.model_copy)."""
        cls = type(self)
        new = object.__new__(cls)
        for setter, value in zip(cls._setters, cls._read_all(self), strict=True):
            setter(new, value)
        if update:
            fields = cls.model_fields
            for name, value in update.items():
                if name not in fields:
                    raise TypeError(f"{cls.__name__} has no field {name!r}")
                object.__setattr__(new, name, value)
        return new


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
