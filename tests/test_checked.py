"""The one check of a stored document (watcher/core/checked.py): the document itself handed back once it fits,
never pydantic's copy; else the reader's own error naming where and the first field that does not fit."""

from __future__ import annotations

import json

import pydantic
import pytest
from typing_extensions import TypedDict

from watcher.core.checked import checked


@pydantic.with_config(pydantic.ConfigDict(extra="allow"))
class Part(TypedDict):
    size: float


@pydantic.with_config(pydantic.ConfigDict(extra="allow"))
class Document(TypedDict, total=False):
    name: str
    parts: list[Part]


class DocumentError(ValueError):
    """A reader's own error."""


ADAPTER: pydantic.TypeAdapter[Document] = pydantic.TypeAdapter(Document)


def test_a_document_that_fits_is_handed_back_itself_as_written():
    text = '{"parts": [{"size": 3, "later": true}], "name": "books", "added": 1.50}'
    data = json.loads(text)
    document = checked(ADAPTER, data, "report 7", DocumentError)
    assert document is data  # not the validated copy, which would hold 3.0 for 3
    assert json.dumps(document) == '{"parts": [{"size": 3, "later": true}], "name": "books", "added": 1.5}'
    assert ADAPTER.validate_python(data)["parts"][0]["size"] == 3.0 and isinstance(document["parts"][0]["size"], int)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": 7}, "report 7: name: Input should be a valid string"),
        ({"parts": [{"size": 1}, {"size": "big"}]}, "report 7: parts.1.size: Input should be a valid number"),
        ({"parts": [{}]}, "report 7: parts.0.size: Field required"),
    ],
)
def test_a_document_that_does_not_fit_is_the_readers_error_naming_the_first_field(data: object, message: str):
    with pytest.raises(DocumentError) as caught:
        checked(ADAPTER, data, "report 7", DocumentError)
    assert str(caught.value).startswith(message)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__  # no pydantic traceback behind it


def test_the_document_itself_not_fitting_is_named_as_the_reader_says():
    with pytest.raises(DocumentError, match=r"^diff\.json: the document: Input should be a valid dictionary"):
        checked(ADAPTER, ["parts"], "diff.json", DocumentError, whole="the document")
    with pytest.raises(DocumentError, match=r"^diff\.json: : Input should be a valid dictionary"):
        checked(ADAPTER, ["parts"], "diff.json", DocumentError)
