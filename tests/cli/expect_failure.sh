#!/usr/bin/env bash
# Usage: expect_failure.sh PATTERN COMMAND...  — passes when COMMAND exits non-zero and its
# output matches the extended regular expression PATTERN and holds no sanitizer report.
pattern=$1; shift
output=$("$@" 2>&1); status=$?
if [[ $status -eq 0 ]]; then echo "expected a non-zero exit, got 0; output:"; echo "$output"; exit 1; fi
# In a sanitizer build the expected failure must be the program's own, not a finding.
if grep -Eq -- "ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error: " <<<"$output"; then
  echo "a sanitizer reported a finding:"; echo "$output"; exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$output"; then echo "output does not match '$pattern':"; echo "$output"; exit 1; fi
echo "exit $status with: $(grep -E -- "$pattern" <<<"$output" | head -n1)"
