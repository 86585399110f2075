from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SkeletonItem")


@_attrs_define
class SkeletonItem:
    """One item of an [`EvidenceSkeleton`].

    Attributes:
        kind (str): The item's kind as the envelope names it (`http`, `stderr`,
            `process_exit`, …).
        code (int | None | Unset): `acp_error`: the JSON-RPC error code.
        excerpt (str | Unset): The item's text (body and error, message and data, lines, stop
            reason) as a bounded sanitised excerpt of its end; empty when it
            had none.
        exit_code (int | None | Unset): `process_exit`: the exit code.
        header_names (list[str] | Unset): `http`: the response's header names (values are never kept).
        signal (None | str | Unset): `process_exit`: the signal (`SIGKILL`).
        status (int | None | Unset): `http`: the response status (absent: no response).
        update (None | str | Unset): `acp_update`: the update's name (`agent_message_chunk`, …).
    """

    kind: str
    code: int | None | Unset = UNSET
    excerpt: str | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    header_names: list[str] | Unset = UNSET
    signal: None | str | Unset = UNSET
    status: int | None | Unset = UNSET
    update: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        code: int | None | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        excerpt = self.excerpt

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        header_names: list[str] | Unset = UNSET
        if not isinstance(self.header_names, Unset):
            header_names = self.header_names

        signal: None | str | Unset
        if isinstance(self.signal, Unset):
            signal = UNSET
        else:
            signal = self.signal

        status: int | None | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status

        update: None | str | Unset
        if isinstance(self.update, Unset):
            update = UNSET
        else:
            update = self.update

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
            }
        )
        if code is not UNSET:
            field_dict["code"] = code
        if excerpt is not UNSET:
            field_dict["excerpt"] = excerpt
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if header_names is not UNSET:
            field_dict["header_names"] = header_names
        if signal is not UNSET:
            field_dict["signal"] = signal
        if status is not UNSET:
            field_dict["status"] = status
        if update is not UNSET:
            field_dict["update"] = update

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = d.pop("kind")

        def _parse_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        code = _parse_code(d.pop("code", UNSET))

        excerpt = d.pop("excerpt", UNSET)

        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))

        header_names = cast(list[str], d.pop("header_names", UNSET))

        def _parse_signal(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        signal = _parse_signal(d.pop("signal", UNSET))

        def _parse_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        def _parse_update(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        update = _parse_update(d.pop("update", UNSET))

        skeleton_item = cls(
            kind=kind,
            code=code,
            excerpt=excerpt,
            exit_code=exit_code,
            header_names=header_names,
            signal=signal,
            status=status,
            update=update,
        )

        skeleton_item.additional_properties = d
        return skeleton_item

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
