from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.class_usage import ClassUsage


T = TypeVar("T", bound="CycleUsage")


@_attrs_define
class CycleUsage:
    """What the session already used in its current cycle, per class (a
    class left out has used nothing). The answer carries the cycle after
    the decision, to send with the next failure of the same cycle.

        Attributes:
            hard (ClassUsage): What one class already used in the session's current cycle.
            transient (ClassUsage): What one class already used in the session's current cycle.
    """

    hard: ClassUsage
    transient: ClassUsage

    def to_dict(self) -> dict[str, Any]:
        hard = self.hard.to_dict()

        transient = self.transient.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "hard": hard,
                "transient": transient,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.class_usage import ClassUsage  # noqa: PLC0415

        d = dict(src_dict)
        hard = ClassUsage.from_dict(d.pop("hard"))

        transient = ClassUsage.from_dict(d.pop("transient"))

        cycle_usage = cls(
            hard=hard,
            transient=transient,
        )

        return cycle_usage
