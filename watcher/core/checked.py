"""The one check of a stored document against its types: a decoded document (a run report, a contract diff, a
backtest answer, an evaluation report, a state kept in the store) validated by a pydantic TypeAdapter and handed
back as it is, or refused with its reader's own error naming the first field that does not fit.

The document itself is handed back, not pydantic's validated copy: a stored document read and written again is
the same bytes (its keys in their order, its numbers as written, no default added, no unknown field dropped).
The return type is the adapter's: validation proved the document has that shape, which a TypeGuard generic over
the adapter's type would not let the type checker see. So the adapter's type must describe the JSON as it is (a
TypedDict, a list or mapping of them, JSON values), never a model or a dataclass: validation would make an
instance of it, and the document handed back is not one (a reader that wants the instance calls the adapter)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

import pydantic

T = TypeVar("T")


def checked(
    adapter: pydantic.TypeAdapter[T],
    data: object,
    where: str,
    error: Callable[[str], Exception],
    *,
    whole: str = "",
) -> T:
    """`data` itself, once `adapter` validates it; else `error("{where}: {dotted.loc}: {msg}")` for the first
    field that does not fit (`whole` stands for the location when it is the document itself)."""
    try:
        adapter.validate_python(data)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or whole
        raise error(f"{where}: {field}: {first['msg']}") from None
    return cast(T, data)
