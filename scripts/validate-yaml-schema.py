#!/usr/bin/python3
"""Validates YAML files against a JSON Schema: validate-yaml-schema.py [--documents] SCHEMA FILE...

Prints `OK <file>` or `FAIL <file>: <path>: <message>` per file; exit 0 only
when all are valid. With --documents a file is a stream of `---`-separated
documents, validated as the list of them (pipegen.yaml). Uses Debian's
python3-yaml and python3-jsonschema.
"""
import json
import sys

import jsonschema
import yaml

# libyaml's C parser when python3-yaml has it (Debian's does): a 4 MB
# blob.yaml loads in about 3 s instead of 8.
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def main(argv):
    documents = len(argv) > 1 and argv[1] == "--documents"
    if documents:
        argv = argv[:1] + argv[2:]
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    failed = 0
    for path in argv[2:]:
        with open(path) as f:
            doc = list(yaml.load_all(f, Loader=Loader)) if documents else yaml.load(f, Loader=Loader)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            failed += 1
            e = errors[0]
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            print(f"FAIL {path}: {where}: {e.message}")
        else:
            print(f"OK {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
