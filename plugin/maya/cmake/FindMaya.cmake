# FindMaya: locates a Maya devkit (headers and the OpenMaya libraries).
#
# Looks under MAYA_LOCATION (CMake or environment variable) or DEVKIT_LOCATION, else the default
# install folders. Defines Maya_FOUND, Maya_INCLUDE_DIR, Maya_LIBRARIES and the imported target
# Maya::Maya, plus MAYA_PLUGIN_SUFFIX (.so, .mll or .bundle).

set(_maya_hints ${MAYA_LOCATION} $ENV{MAYA_LOCATION} $ENV{DEVKIT_LOCATION})
foreach(_v 2026 2025 2024 2023 2022)
  list(APPEND _maya_hints /usr/autodesk/maya${_v} "C:/Program Files/Autodesk/Maya${_v}"
       /Applications/Autodesk/maya${_v}/Maya.app/Contents)
endforeach()

find_path(Maya_INCLUDE_DIR maya/MFnPlugin.h HINTS ${_maya_hints} PATH_SUFFIXES include devkit/include ../../devkit/include)
set(Maya_LIBRARIES)
foreach(_lib OpenMaya OpenMayaAnim Foundation)
  find_library(Maya_${_lib}_LIBRARY ${_lib} HINTS ${_maya_hints} PATH_SUFFIXES lib Maya.app/Contents/MacOS)
  list(APPEND Maya_LIBRARIES ${Maya_${_lib}_LIBRARY})
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Maya REQUIRED_VARS Maya_INCLUDE_DIR Maya_OpenMaya_LIBRARY
                                  Maya_OpenMayaAnim_LIBRARY Maya_Foundation_LIBRARY)

if(Maya_FOUND AND NOT TARGET Maya::Maya)
  add_library(Maya::Maya INTERFACE IMPORTED)
  set_target_properties(Maya::Maya PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Maya_INCLUDE_DIR}"
                                              INTERFACE_LINK_LIBRARIES "${Maya_LIBRARIES}")
  if(WIN32)
    set_property(TARGET Maya::Maya APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS NT_PLUGIN REQUIRE_IOSTREAM)
  elseif(APPLE)
    set_property(TARGET Maya::Maya APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS OSMac_ MAC_PLUGIN)
  else()
    set_property(TARGET Maya::Maya APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS LINUX _BOOL REQUIRE_IOSTREAM)
  endif()
endif()

if(WIN32)
  set(MAYA_PLUGIN_SUFFIX ".mll")
elseif(APPLE)
  set(MAYA_PLUGIN_SUFFIX ".bundle")
else()
  set(MAYA_PLUGIN_SUFFIX ".so")
endif()
