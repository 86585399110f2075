from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.class_policy import ClassPolicy


T = TypeVar("T", bound="CandidatePolicy")


@_attrs_define
class CandidatePolicy:
    """A candidate's whole policy document: one policy per configurable class.

    Attributes:
        hard (ClassPolicy): The policy for one class of one candidate.
        transient (ClassPolicy): The policy for one class of one candidate.
        version (int): Always 1.
    """

    hard: ClassPolicy
    transient: ClassPolicy
    version: int

    def to_dict(self) -> dict[str, Any]:
        hard = self.hard.to_dict()

        transient = self.transient.to_dict()

        version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "hard": hard,
                "transient": transient,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.class_policy import ClassPolicy  # noqa: PLC0415

        d = dict(src_dict)
        hard = ClassPolicy.from_dict(d.pop("hard"))

        transient = ClassPolicy.from_dict(d.pop("transient"))

        version = d.pop("version")

        candidate_policy = cls(
            hard=hard,
            transient=transient,
            version=version,
        )

        return candidate_policy
