#!/usr/bin/env bash
# backends_link_sdk_only_test.sh PLUGIN.so... — every in-tree plugin is built against the SDK alone:
# none needs libhwinfer at load time (readelf's NEEDED entries), so each loads the way a vendor's
# plugin does, into any host of the same ABI major. Fails naming the plugin and what it needs.
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: $0 PLUGIN.so..." >&2; exit 2; }
status=0
for plugin in "$@"; do
  [[ -f "$plugin" ]] || { echo "FAIL $plugin: no such file" >&2; status=1; continue; }
  needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if grep -q '^libhwinfer\.so' <<<"$needed"; then
    echo "FAIL $plugin needs $(grep '^libhwinfer\.so' <<<"$needed" | tr '\n' ' ')(a plugin links the SDK only)" >&2
    status=1
  else
    echo "ok   $plugin: $(tr '\n' ' ' <<<"$needed")"
  fi
done
exit $status
