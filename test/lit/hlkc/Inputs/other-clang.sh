#!/bin/sh
# clang-14 that reports another identity: hlkc's cache key must change.
if [ "$1" = "--version" ]; then
  echo "Other clang version 14.0.6-patched"
  exit 0
fi
exec clang-14 "$@"
