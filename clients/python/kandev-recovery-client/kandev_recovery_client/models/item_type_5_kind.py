from enum import StrEnum


class ItemType5Kind(StrEnum):
    STDOUT = "stdout"

    def __str__(self) -> str:
        return str(self.value)
