# hwinferPlugin.cmake — the one way to build an hwinfer backend plugin, in tree and out of tree.
#
# Installed next to hwinferConfig.cmake (find_package(hwinfer) includes it) and included by the
# hwinfer source tree itself (cmake/HwinferPlugin.cmake), so vendors and the in-tree backends get
# exactly the same library: a MODULE named hwinfer-<name>.so that exports one symbol and resolves
# every other symbol at link time. It must not add compile definitions or link the core library:
# a plugin sees only the C ABI header (hwinfer::plugin_headers), never the core's C++ API.
#
#   hwinfer_add_plugin(<name> <source>...)
#       Adds MODULE target hwinfer-<name> (file hwinfer-<name>.so, no "lib" prefix) with hidden
#       symbol visibility, -Wl,--no-undefined (a missing symbol is a link error here, not a dlopen
#       error on a user's machine), linked to hwinfer::plugin_headers, and installs it into
#       HWINFER_PLUGIN_INSTALL_DIR. At the end of the calling directory it also links the version
#       script hwinferPlugin.map (export hwinfer_plugin_query only, so the plugin can be
#       dlclose'd), unless the target or CMAKE_MODULE_LINKER_FLAGS already name a version script.
#
#   hwinfer_add_conformance_test(<plugin-target> [NAME <test>] [EXPECTATIONS <file.yaml>])
#       Adds a CTest test that runs `hwinfer conformance --plugin <plugin file>` (needs
#       HWINFER_EXECUTABLE, which the installed package sets).
#
# Variables read by hwinfer_add_plugin (all optional):
#   HWINFER_PLUGIN_INSTALL_DIR        install destination; relative paths are relative to
#                                     CMAKE_INSTALL_PREFIX (default: <libdir>/hwinfer/plugins)
#   HWINFER_PLUGIN_OUTPUT_DIRECTORY   build-tree folder for the .so (default: CMake's default)
#   HWINFER_PLUGIN_TARGET_HOOKS       commands called as <hook>(<target>) on every new plugin
#                                     target (the hwinfer tree uses it for its warning flags)
#   HWINFER_PLUGIN_EXPORT_MAP         OFF: do not apply hwinferPlugin.map (default ON)
#
# Also sets HWINFER_EXPECTATIONS_INSTALL_DIR (default <datadir>/hwinfer/conformance): install a
# backend's conformance expectations there as <backend name>.yaml and `hwinfer conformance
# --backend <name>` of an hwinfer installed under the same prefix applies them by default.
include_guard(GLOBAL)
include(GNUInstallDirs)

# Kept as a global property: the deferred call below runs in the caller's directory scope.
set_property(GLOBAL PROPERTY HWINFER_PLUGIN_EXPORT_MAP_FILE ${CMAKE_CURRENT_LIST_DIR}/hwinferPlugin.map)

if(NOT DEFINED HWINFER_PLUGIN_INSTALL_DIR)
  set(HWINFER_PLUGIN_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/hwinfer/plugins)
endif()
if(NOT DEFINED HWINFER_EXPECTATIONS_INSTALL_DIR)
  set(HWINFER_EXPECTATIONS_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/hwinfer/conformance)
endif()

function(hwinfer_add_plugin name)
  if(NOT name MATCHES "^[A-Za-z0-9_]+$")
    message(FATAL_ERROR "hwinfer_add_plugin: plugin name '${name}' must be letters, digits and "
                        "underscores (it becomes the file name hwinfer-${name}.so and the "
                        "backend name in configs)")
  endif()
  if(ARGC LESS 2)
    message(FATAL_ERROR "hwinfer_add_plugin(${name}): no source files given")
  endif()

  set(target hwinfer-${name})
  add_library(${target} MODULE ${ARGN})
  # hwinfer::plugin_headers comes from find_package(hwinfer) (or, in tree, sdk/CMakeLists.txt,
  # which may be read after this call: the name is resolved when CMake generates).
  target_link_libraries(${target} PRIVATE hwinfer::plugin_headers)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME hwinfer-${name}
    SUFFIX ".so"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
    if(NOT DEFINED HWINFER_PLUGIN_EXPORT_MAP OR HWINFER_PLUGIN_EXPORT_MAP)
      # Deferred to the end of the directory so a target that brings its own version script
      # (two anonymous version scripts are a link error) can be seen and left alone.
      cmake_language(EVAL CODE
        "cmake_language(DEFER CALL _hwinfer_plugin_apply_export_map [[${target}]])")
    endif()
  endif()
  if(DEFINED HWINFER_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${HWINFER_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  foreach(hook IN LISTS HWINFER_PLUGIN_TARGET_HOOKS)
    cmake_language(CALL ${hook} ${target})
  endforeach()
  install(TARGETS ${target} LIBRARY DESTINATION ${HWINFER_PLUGIN_INSTALL_DIR})
endfunction()

# Links hwinferPlugin.map into |target| unless it already has a version script.
function(_hwinfer_plugin_apply_export_map target)
  get_target_property(link_options ${target} LINK_OPTIONS)
  get_target_property(link_flags ${target} LINK_FLAGS)
  if("${link_options};${link_flags};${CMAKE_MODULE_LINKER_FLAGS}" MATCHES "version-script")
    return()
  endif()
  get_property(map GLOBAL PROPERTY HWINFER_PLUGIN_EXPORT_MAP_FILE)
  target_link_options(${target} PRIVATE -Wl,--version-script=${map})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${map})
endfunction()

function(hwinfer_add_conformance_test plugin_target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME;EXPECTATIONS" "")
  if(NOT arg_NAME)
    set(arg_NAME ${plugin_target}_conformance)
  endif()
  if(NOT HWINFER_EXECUTABLE)
    message(FATAL_ERROR "hwinfer_add_conformance_test: HWINFER_EXECUTABLE is not set (the "
                        "installed hwinfer package sets it to <prefix>/bin/hwinfer)")
  endif()
  set(command ${HWINFER_EXECUTABLE} conformance --plugin $<TARGET_FILE:${plugin_target}>)
  if(arg_EXPECTATIONS)
    get_filename_component(expectations ${arg_EXPECTATIONS} ABSOLUTE)
    list(APPEND command --expectations ${expectations})
  endif()
  add_test(NAME ${arg_NAME} COMMAND ${command})
endfunction()
