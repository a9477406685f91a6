"""Document bombs made by the tests (issue 25): each is a small file, made a megabyte at a
time, that stands for a huge document: a PDF whose content stream inflates to hundreds of
MB of spaces, a Word file of very many paragraphs, a Word file with a zip bomb inside."""

from __future__ import annotations

import io
import zipfile
import zlib

import docx

MB = 1024 * 1024
TEXT = b"BT /F1 12 Tf 72 720 Td (Queries attend to keys.) Tj ET\n"


def flate_spaces(megabytes: int, text: bytes = b"") -> bytes:
    """A zlib stream of ``text`` and then ``megabytes`` MB of spaces, made a MB at a time."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(text)]
    spaces = b" " * MB
    parts += [packer.compress(spaces) for _ in range(megabytes)]
    parts.append(packer.flush())
    return b"".join(parts)


def pdf_with_content(stream: bytes) -> bytes:
    """A one-page PDF whose page's content is ``stream`` (Flate-encoded), with a valid xref."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def docx_with_body(paragraphs: int, *, words: bytes = b"a") -> bytes:
    """A Word file whose body holds ``paragraphs`` paragraphs, its XML written in pieces."""
    base = io.BytesIO()
    docx.Document().save(base)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(base) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            if info.filename != "word/document.xml":
                target.writestr(info, source.read(info.filename))
                continue
            xml = source.read(info.filename)
            head, tail = xml.split(b"<w:body>", 1)
            with target.open("word/document.xml", "w") as part:
                part.write(head + b"<w:body>")
                one = b"<w:p><w:r><w:t>" + words + b"</w:t></w:r></w:p>"
                for start in range(0, paragraphs, 10_000):
                    part.write(one * min(10_000, paragraphs - start))
                part.write(b"</w:body>" + tail.split(b"</w:body>", 1)[1])
    return out.getvalue()


def zip_bomb_docx(megabytes: int) -> bytes:
    """A real Word file with one more part: ``megabytes`` MB of zeros, packed small."""
    out = io.BytesIO()
    docx.Document().save(out)
    with (
        zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED) as archive,
        archive.open("word/media/filler.bin", "w", force_zip64=True) as part,
    ):
        zeros = bytes(MB)
        for _ in range(megabytes):
            part.write(zeros)
    return out.getvalue()
