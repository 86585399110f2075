from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.explain_text import ExplainText
from ..types import UNSET, Unset

T = TypeVar("T", bound="ExplainPlace")


@_attrs_define
class ExplainPlace:
    """The item (by index in the envelope) and, for a text pattern, the text
    and the stream line the deciding rule matched in. A rule with no text
    pattern names the item carrying its structured fact (a status, an error
    identifier) and no text source.

        Attributes:
            item (int):
            kind (str): The item's kind (`http`, `stderr`, `stdout`, `acp_error`…).
            line (int | None | Unset): The line of a stream item, from 0.
            text (ExplainText | None | Unset):
    """

    item: int
    kind: str
    line: int | None | Unset = UNSET
    text: ExplainText | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        item = self.item

        kind = self.kind

        line: int | None | Unset
        if isinstance(self.line, Unset):
            line = UNSET
        else:
            line = self.line

        text: None | str | Unset
        if isinstance(self.text, Unset):
            text = UNSET
        elif isinstance(self.text, ExplainText):
            text = self.text.value
        else:
            text = self.text

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "item": item,
                "kind": kind,
            }
        )
        if line is not UNSET:
            field_dict["line"] = line
        if text is not UNSET:
            field_dict["text"] = text

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        item = d.pop("item")

        kind = d.pop("kind")

        def _parse_line(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        line = _parse_line(d.pop("line", UNSET))

        def _parse_text(data: object) -> ExplainText | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                text_type_1 = ExplainText(data)

                return text_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ExplainText | None | Unset, data)

        text = _parse_text(d.pop("text", UNSET))

        explain_place = cls(
            item=item,
            kind=kind,
            line=line,
            text=text,
        )

        explain_place.additional_properties = d
        return explain_place

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
