#!/bin/sh
# Prints lines, words and bytes of each workspace file given as an argument.
set -u

if [ "$#" -eq 0 ]; then
  echo "usage: stats.sh FILE..." >&2
  exit 2
fi

status=0
for file in "$@"; do
  case "$file" in
    /* | .. | ../* | */.. | */../*)
      echo "$file: give a path inside the workspace (no absolute paths or ..)" >&2
      status=1
      continue
      ;;
  esac
  if [ ! -f "$file" ]; then
    echo "$file: no such file" >&2
    status=1
    continue
  fi
  lines=$(wc -l < "$file")
  words=$(wc -w < "$file")
  bytes=$(wc -c < "$file")
  # wc pads its counts with spaces on some systems; $((...)) drops them.
  echo "$file: lines=$((lines)) words=$((words)) bytes=$((bytes))"
done
exit "$status"
