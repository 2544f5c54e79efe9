#!/usr/bin/env python3
"""Validate JSON files against a JSON Schema (draft 2020-12).

Usage: validate-json.py SCHEMA FILE...

Prints one line per error, `FILE: JSON-PATH: message`, with the path of the
failing value (`$.queues[2].dram[0].address`). Exit status: 0 when every file
is valid, 1 when some file is invalid or unreadable, 2 on a usage error or an
unusable schema.

Needs python3-jsonschema (Debian package `python3-jsonschema`).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    sys.stderr.write("validate-json.py: error: python3-jsonschema is not installed "
                     "(apt-get install -y python3-jsonschema)\n")
    sys.exit(2)

MAX_ERRORS_PER_FILE = 20


def json_path(parts):
    """`$` followed by .key / [index] for every step of an error path."""
    out = "$"
    for p in parts:
        out += "[%d]" % p if isinstance(p, int) else ".%s" % p
    return out


def load(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("%s: error: cannot read %s: %s\n" % (path, what, e))
        return None


def explain(error):
    """The errors that explain `error`. For a failed oneOf/anyOf, the branch
    that got deepest into the value (e.g. the instruction shape whose "op"
    matched) says more than "is not valid under any of the given schemas"."""
    if error.validator not in ("oneOf", "anyOf") or not error.context:
        return [error]
    branches = {}
    for e in error.context:
        branches.setdefault(e.relative_schema_path[0], []).append(e)
    # A branch whose discriminator ("op", "tm": a const/enum property) failed
    # is the wrong branch; if exactly one branch is left, it is the intended one.
    matching = {b: errs for b, errs in branches.items()
                if not any(e.validator in ("const", "enum") and len(e.relative_path) == 1 for e in errs)}
    if len(matching) == 1:
        return [x for e in next(iter(matching.values())) for x in explain(e)]
    depth = {b: max(len(e.relative_path) for e in errs) for b, errs in branches.items()}
    deepest = max(depth.values())
    winners = [b for b, d in depth.items() if d == deepest]
    if deepest == 0 or len(winners) != 1:
        return [error]
    return [x for e in branches[winners[0]] for x in explain(e)]


def short(message, limit=160):
    return message if len(message) <= limit else message[:limit - 3] + "..."


def all_errors(validator, instance):
    """Every error, explained, sorted by location."""
    errors = [x for e in validator.iter_errors(instance) for x in explain(e)]
    errors.sort(key=lambda e: (json_path(e.absolute_path), e.message))
    return errors


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: validate-json.py SCHEMA FILE...\n")
        return 2
    schema = load(argv[1], "schema")
    if schema is None:
        return 2
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        sys.stderr.write("%s: error: invalid schema: %s\n" % (argv[1], e.message))
        return 2
    validator = cls(schema)
    status = 0
    for path in argv[2:]:
        instance = load(path, "JSON")
        if instance is None:
            status = 1
            continue
        errors = all_errors(validator, instance)
        if not errors:
            continue
        status = 1
        for e in errors[:MAX_ERRORS_PER_FILE]:
            print("%s: %s: %s" % (path, json_path(e.absolute_path), short(e.message)))
        if len(errors) > MAX_ERRORS_PER_FILE:
            print("%s: ... %d more errors" % (path, len(errors) - MAX_ERRORS_PER_FILE))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
