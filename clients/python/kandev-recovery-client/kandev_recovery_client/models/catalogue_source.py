from enum import StrEnum


class CatalogueSource(StrEnum):
    DIRECTORY = "directory"
    EMBEDDED = "embedded"

    def __str__(self) -> str:
        return str(self.value)
