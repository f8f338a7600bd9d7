/*
 * no_symbol_plugin.c — hwinfer-abi-no-symbol.so: a valid shared library that does not export
 * hwinfer_plugin_query (it exports a similarly named function instead), like a vendor library put
 * in the plugin folder by mistake. The host must say which symbol is missing.
 */
#include <hwinfer/plugin.h>

HWINFER_PLUGIN_EXPORT int hwinfer_plugin_query_v0(void) { return 0; }
