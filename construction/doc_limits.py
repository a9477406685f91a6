"""How much reading one document may take, and the words for each limit it passes.

A small file can stand for a huge document: a PDF whose content stream inflates to
gigabytes of spaces, a ``.docx`` holding a million empty paragraphs, a zip bomb. The
readers check what they can see cheaply (pages, characters, paragraphs, how far the file
inflates); ``doc_sandbox`` reads the formats that can inflate in a child process whose
memory and processor time are capped as well, so what the checks miss costs the child,
never the process that asked. Every refusal names the limit it hit, in words.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MB", "ReadLimits"]

MB = 1024 * 1024


@dataclass(frozen=True)
class ReadLimits:
    """The limits of reading one document (the defaults are the settings' defaults).

    ``memory_mb`` and ``cpu_seconds`` bound the child process that reads a PDF, Word or
    HTML file (its address space and processor time); the rest bound the document itself
    wherever it is read. A file may always inflate to ``inflation_floor_bytes``, however
    small it is: only past that does ``max_inflation`` (unpacked size over file size)
    apply.
    """

    memory_mb: int = 1024
    cpu_seconds: int = 120
    max_pages: int = 5_000
    max_chars: int = 50_000_000
    max_paragraphs: int = 200_000
    max_inflation: int = 100
    max_unpacked_bytes: int = 200_000_000
    inflation_floor_bytes: int = 10_000_000

    def memory(self) -> str:
        return f"the document needs more than {self.memory_mb:,} MB to read (KG_READ_MEMORY_MB)"

    def time(self) -> str:
        return (
            f"the document needs more than {self.cpu_seconds:,} s of processor time to read "
            "(KG_READ_CPU_SECONDS)"
        )

    def pages(self) -> str:
        return f"the document has more than {self.max_pages:,} pages (KG_READ_MAX_PAGES)"

    def chars(self) -> str:
        return (
            f"the document has more than {self.max_chars:,} characters of text (KG_READ_MAX_CHARS)"
        )

    def paragraphs(self) -> str:
        return (
            f"the document has more than {self.max_paragraphs:,} paragraphs "
            "(KG_READ_MAX_PARAGRAPHS)"
        )

    def unpacked(self, size: int) -> str:
        return (
            f"the file unpacks to more than {self.max_unpacked_bytes:,} bytes "
            f"(at least {size:,}; KG_READ_MAX_UNPACKED_BYTES)"
        )

    def inflation(self, packed: int) -> str:
        return (
            f"the file inflates more than {self.max_inflation:,} times: its {packed:,} bytes "
            f"unpack to more than {self.inflation_cap(packed):,} (KG_READ_MAX_INFLATION)"
        )

    def inflation_cap(self, packed: int) -> int:
        """The most bytes a file of ``packed`` bytes may unpack to by its ratio."""
        return max(self.max_inflation * packed, self.inflation_floor_bytes)

    def unpack_refusal(self, packed: int, unpacked: int) -> str | None:
        """Why a file of ``packed`` bytes may not unpack to ``unpacked``, or None."""
        if unpacked > self.max_unpacked_bytes:
            return self.unpacked(unpacked)
        if unpacked > self.inflation_cap(packed):
            return self.inflation(packed)
        return None

    def as_json(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict) -> ReadLimits:
        return cls(**{name: int(data[name]) for name in cls.__dataclass_fields__ if name in data})
