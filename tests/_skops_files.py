"""Rewriting a skops model file's schema: how tests make the files older code wrote."""
import json
import zipfile


def rewrite_schema(path, out, edit):
    """Copy the skops file ``path`` to ``out``, calling ``edit(node)`` on every dict
    node of its schema (in place, parents before children); returns ``out``."""
    def walk(node):
        if isinstance(node, dict):
            edit(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "schema.json":
                schema = json.loads(data)
                walk(schema)
                data = json.dumps(schema).encode()
            dst.writestr(name, data)
    return out
