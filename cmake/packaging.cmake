# The installed layout and rgpu's Debian packages (`cpack -G DEB` in the
# build folder; tools/build-debs.sh). Paths are below the prefix (/usr for
# the packages) except the server's configuration in /etc/rgpu.
#   rgpu-client: /usr/lib/rgpu/rgpu (the CLI, linked from /usr/bin/rgpu) and
#     its libraries in /usr/lib/rgpu/lib, the layout `rgpu run` looks for
#     (lib/ beside the executable). No file in a folder the loader searches by
#     default and no ld.so.conf entry: NVIDIA's libcuda.so.1 stays the one
#     every other program loads.
#   rgpu-server: /usr/lib/rgpu/server (the daemon, linked from
#     /usr/sbin/rgpu-server, and the modules it loads from its own folder),
#     its systemd unit, /etc/rgpu/server.conf; its maintainer scripts
#     (tools/deb) make its user and /var/lib/rgpu and take them at purge.
set(RGPU_CLIENT_DIR lib/rgpu)
set(RGPU_SERVER_DIR lib/rgpu/server)

install(TARGETS rgpu RUNTIME DESTINATION ${RGPU_CLIENT_DIR} COMPONENT client)
install(TARGETS cudart LIBRARY DESTINATION ${RGPU_CLIENT_DIR}/lib COMPONENT client)
install(TARGETS rgpu-audit LIBRARY DESTINATION ${RGPU_CLIENT_DIR}/lib COMPONENT client)
install(TARGETS nccl LIBRARY DESTINATION ${RGPU_CLIENT_DIR}/lib COMPONENT client)  # libnccl.so.2 (docs/nccl.md)
# rgpu's driver is its runtime's file under the driver's names (the `cuda` target).
install(FILES ${CMAKE_BINARY_DIR}/lib/libcuda.so.1 ${CMAKE_BINARY_DIR}/lib/libcuda.so
        DESTINATION ${RGPU_CLIENT_DIR}/lib COMPONENT client)

install(TARGETS rgpu-server RUNTIME DESTINATION ${RGPU_SERVER_DIR} COMPONENT server)
install(TARGETS rgpu-backend-cuda LIBRARY DESTINATION ${RGPU_SERVER_DIR} COMPONENT server)
install(FILES tools/rgpu-server.service DESTINATION lib/systemd/system COMPONENT server)
install(FILES tools/deb/server.conf DESTINATION /etc/rgpu COMPONENT server)
install(FILES docs/pool.md DESTINATION share/doc/rgpu-server COMPONENT server)
if(TARGET rgpu-transport-ucx)
  install(TARGETS rgpu-transport-ucx LIBRARY DESTINATION ${RGPU_CLIENT_DIR}/lib COMPONENT client)
  install(TARGETS rgpu-transport-ucx LIBRARY DESTINATION ${RGPU_SERVER_DIR} COMPONENT server)
endif()

# The commands on the PATH, as relative links.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/install-links)
file(CREATE_LINK ../lib/rgpu/rgpu ${CMAKE_BINARY_DIR}/install-links/rgpu SYMBOLIC)
file(CREATE_LINK ../lib/rgpu/server/rgpu-server ${CMAKE_BINARY_DIR}/install-links/rgpu-server SYMBOLIC)
install(FILES ${CMAKE_BINARY_DIR}/install-links/rgpu DESTINATION bin COMPONENT client)
install(FILES ${CMAKE_BINARY_DIR}/install-links/rgpu-server DESTINATION sbin COMPONENT server)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rgpu)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "rgpu maintainers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL client server)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME rgpu-client)
set(CPACK_COMPONENT_CLIENT_DESCRIPTION "rgpu client: unmodified CUDA programs on remote GPUs
 rgpu run -- PROGRAM starts a program on rgpu's libcudart.so.13 and libcuda.so.1,
 which forward its CUDA calls to an rgpu-server; rgpu doctor checks the setup.
 Needs no CUDA toolkit and no GPU on this machine.")
# The ucx transport module, when built, uses the system's UCX only if asked for.
set(CPACK_DEBIAN_CLIENT_PACKAGE_DEPENDS "libc6 (>= 2.36), libstdc++6, libgcc-s1, libssl3, liblz4-1, libzstd1")
set(CPACK_DEBIAN_CLIENT_PACKAGE_RECOMMENDS libucx0)
set(CPACK_DEBIAN_SERVER_PACKAGE_NAME rgpu-server)
set(CPACK_COMPONENT_SERVER_DESCRIPTION "rgpu server: a GPU host's daemon for rgpu clients
 rgpu-server serves this host's GPUs to rgpu clients over tcp, shm or ucx,
 each client from a worker process of its own. Runs as the system user rgpu
 (systemd unit rgpu-server); configuration in /etc/rgpu/server.conf.
 Needs NVIDIA's driver (libcuda.so.1).")
set(RGPU_SERVER_DEPENDS "libc6 (>= 2.36), libstdc++6, libgcc-s1, libssl3, liblz4-1, libzstd1, adduser")
if(HTTPLIB_FOUND)
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" RGPU_HTTPLIB_ABI "${HTTPLIB_VERSION}")
  string(APPEND RGPU_SERVER_DEPENDS ", libcpp-httplib${RGPU_HTTPLIB_ABI}")
endif()
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "${RGPU_SERVER_DEPENDS}")
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS libucx0)
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/tools/deb/postinst ${PROJECT_SOURCE_DIR}/tools/deb/prerm
  ${PROJECT_SOURCE_DIR}/tools/deb/postrm ${PROJECT_SOURCE_DIR}/tools/deb/conffiles)
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
