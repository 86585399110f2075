from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.retry_policy import RetryPolicy
    from ..models.wait_for_reset import WaitForReset


T = TypeVar("T", bound="ClassPolicy")


@_attrs_define
class ClassPolicy:
    """The policy for one class of one candidate.

    Attributes:
        on_exhausted (str):  Example: skip.
        retry (RetryPolicy): Same-candidate retry with exponential backoff.
        wait_for_reset (WaitForReset): Waiting for a trusted, validated future reset time.
    """

    on_exhausted: str
    retry: RetryPolicy
    wait_for_reset: WaitForReset

    def to_dict(self) -> dict[str, Any]:
        on_exhausted = self.on_exhausted

        retry = self.retry.to_dict()

        wait_for_reset = self.wait_for_reset.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "on_exhausted": on_exhausted,
                "retry": retry,
                "wait_for_reset": wait_for_reset,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415
        from ..models.wait_for_reset import WaitForReset  # noqa: PLC0415

        d = dict(src_dict)
        on_exhausted = d.pop("on_exhausted")

        retry = RetryPolicy.from_dict(d.pop("retry"))

        wait_for_reset = WaitForReset.from_dict(d.pop("wait_for_reset"))

        class_policy = cls(
            on_exhausted=on_exhausted,
            retry=retry,
            wait_for_reset=wait_for_reset,
        )

        return class_policy
