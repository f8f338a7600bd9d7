/*
 * gone_library.c — libabi_gone.so, the dependency hwinfer-abi-missing-dep.so links but cannot
 * find at run time (see missing_dep_plugin.c). Exists only to be missing.
 */
__attribute__((visibility("default"))) int abi_gone_function(void) { return 42; }
