# Installation: library, public headers, CLI, CMake package and pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS mans EXPORT mansTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libcompress/include/mans DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT mansTargets NAMESPACE mans:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mans)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mansConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mansConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mans)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mansConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mansConfig.cmake ${PROJECT_BINARY_DIR}/mansConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mans)

# The .pc file locates the prefix from its own path, so `cmake --install
# --prefix X` works; a static libmans lists its dependencies in Libs.
# With MANS_XXHASH_HEADER_ONLY xxHash is compiled into libmans: no -lxxhash.
file(RELATIVE_PATH MANS_PC_UP "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
set(_mans_pc_deps "-fopenmp -lxxhash")
if(MANS_XXHASH_HEADER_ONLY)
  set(_mans_pc_deps "-fopenmp")
endif()
if(BUILD_SHARED_LIBS)
  set(MANS_PC_LIBS "-L\${libdir} -lmans")
  set(MANS_PC_LIBS_PRIVATE "${_mans_pc_deps}")
else()
  set(MANS_PC_LIBS "-L\${libdir} -lmans ${_mans_pc_deps}")
  set(MANS_PC_LIBS_PRIVATE "")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/mans.pc.in ${PROJECT_BINARY_DIR}/mans.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mans.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
