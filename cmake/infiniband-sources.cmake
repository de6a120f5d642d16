# The module's files, shared by the standalone and the in-tree build.
# Globbed (with CONFIGURE_DEPENDS, so a new file re-runs CMake): every .cc under model/ (in
# its layer folders) and helper/ is part of the library, every test/*-test.cc part of the
# GoogleTest suite, every examples/*.cc an example program.
set(IB_ROOT ${CMAKE_CURRENT_LIST_DIR}/..)
file(GLOB_RECURSE IB_MODEL_SOURCES CONFIGURE_DEPENDS ${IB_ROOT}/model/*.cc)
file(GLOB_RECURSE IB_MODEL_HEADERS CONFIGURE_DEPENDS ${IB_ROOT}/model/*.h)
# *-internal.h headers are shared by the .cc files of one class, not public.
list(FILTER IB_MODEL_HEADERS EXCLUDE REGEX "-internal\\.h$")
file(GLOB IB_HELPER_SOURCES CONFIGURE_DEPENDS ${IB_ROOT}/helper/*.cc)
file(GLOB IB_HELPER_HEADERS CONFIGURE_DEPENDS ${IB_ROOT}/helper/*.h)
file(GLOB IB_TEST_SOURCES CONFIGURE_DEPENDS ${IB_ROOT}/test/*-test.cc ${IB_ROOT}/test/*-util.cc)
# ns-3 TestSuite wrappers (test.py): built into the module's test library in-tree.
file(GLOB IB_NS3_TEST_SOURCES CONFIGURE_DEPENDS ${IB_ROOT}/test/*-test-suite.cc)
file(GLOB IB_EXAMPLES CONFIGURE_DEPENDS ${IB_ROOT}/examples/*.cc)
file(GLOB IB_UTILS_PROGRAMS CONFIGURE_DEPENDS ${IB_ROOT}/utils/*.cc)
# A user's own programs (standalone build): every scratch/*.cc.
file(GLOB IB_SCRATCH_PROGRAMS CONFIGURE_DEPENDS ${IB_ROOT}/scratch/*.cc)
