from enum import StrEnum


class ItemType0Kind(StrEnum):
    HTTP = "http"

    def __str__(self) -> str:
        return str(self.value)
