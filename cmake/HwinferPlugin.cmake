# In-tree use of the plugin SDK's hwinfer_add_plugin (sdk/cmake/hwinferPlugin.cmake), so the
# backends in this tree are built exactly as a vendor's out-of-tree plugin is. What differs in tree
# is set here and nowhere else: plugins land in the build tree's plugin folder
# (HWINFER_PLUGIN_BUILD_DIR, mirroring <prefix>/lib/hwinfer/plugins) and get the project's warning
# flags. Must not define its own copy of hwinfer_add_plugin.
set(HWINFER_PLUGIN_OUTPUT_DIRECTORY ${HWINFER_PLUGIN_BUILD_DIR})
set(HWINFER_PLUGIN_TARGET_HOOKS hwinfer_set_warnings)
include(${PROJECT_SOURCE_DIR}/sdk/cmake/hwinferPlugin.cmake)
