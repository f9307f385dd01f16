"""The batch report: notebooks run by papermill, the HTML index, the recorder."""

import sys

# nbformat validates notebooks with jsonschema, whose optional IRI format checker builds the
# rfc3987_syntax grammar when imported: 0.7 s before every report starts, for formats no
# notebook schema uses. This process goes without that one checker (an import of it fails).
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
