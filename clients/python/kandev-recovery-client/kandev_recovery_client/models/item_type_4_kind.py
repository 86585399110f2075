from enum import StrEnum


class ItemType4Kind(StrEnum):
    STDERR = "stderr"

    def __str__(self) -> str:
        return str(self.value)
