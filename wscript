# -*- Mode: python; py-indent-offset: 4; indent-tabs-mode: nil; coding: utf-8; -*-
#
# waf build description of the infiniband module, for waf-era ns-3 (3.29 to 3.35):
# put this folder at contrib/infiniband (or src/infiniband) of such an ns-3 tree, then
#   ./waf configure --enable-examples --enable-tests && ./waf build
# CMake-era ns-3 (3.36 and later) and the standalone build use CMakeLists.txt instead.
#
# File lists are globbed, as in cmake/infiniband-sources.cmake:
#   model/**/*.cc, helper/*.cc        -> the module library (ns3-infiniband)
#   model/**/*.h, helper/*.h          -> public headers, ns3/<name>.h (folders flattened)
#   test/*-test.cc, test/*-util.cc    -> GoogleTest program infiniband-gtest (with tests)
#   test/*-test-suite.cc              -> ns-3 TestSuite library for test.py (if any)
#   examples/*.cc                     -> one ns-3 program each (with examples)
#   utils/*.cc                        -> one ns-3 program each

IB_MODULE = 'infiniband'
IB_DEPENDENCIES = ['core', 'network', 'internet', 'point-to-point', 'applications',
                   'flow-monitor', 'traffic-control']
IB_CXX17 = ['-std=c++17']


def _has_cxx17_or_later(flags):
    for flag in flags:
        if flag.startswith('-std=') and flag[-2:] in ('17', '1z', '20', '2a', '23', '2b'):
            return True
    return False


def configure(conf):
    # The module is C++17; waf-era ns-3 may compile with an older -std. The flag is
    # applied to this module's task generators only (uselib IBCXX17), after ns-3's own.
    if not _has_cxx17_or_later(conf.env['CXXFLAGS']):
        conf.env.append_value('CXXFLAGS_IBCXX17', IB_CXX17)

    # Boost headers (Boost.Graph for routing): required.
    have_boost = conf.check_cxx(header_name='boost/graph/adjacency_list.hpp',
                                cxxflags=IB_CXX17,
                                uselib_store='BOOST',
                                define_name='HAVE_BOOST_GRAPH',
                                mandatory=False)
    conf.env['ENABLE_INFINIBAND'] = bool(have_boost)
    conf.report_optional_feature('infiniband', 'InfiniBand module',
                                 conf.env['ENABLE_INFINIBAND'],
                                 'Boost headers (boost/graph) not found;'
                                 ' install libboost-dev libboost-graph-dev')
    if not conf.env['ENABLE_INFINIBAND']:
        conf.env.append_value('MODULES_NOT_BUILT', IB_MODULE)
        return

    # GoogleTest (libgtest-dev): optional; without it the GoogleTest suite is not built.
    have_gtest = conf.check_cxx(header_name='gtest/gtest.h',
                                lib=['gtest_main', 'gtest', 'pthread'],
                                cxxflags=IB_CXX17,
                                uselib_store='GTEST',
                                define_name='HAVE_GTEST',
                                mandatory=False)
    conf.env['ENABLE_INFINIBAND_GTEST'] = bool(have_gtest)
    conf.report_optional_feature('infiniband-gtest', 'InfiniBand GoogleTest suite',
                                 conf.env['ENABLE_INFINIBAND_GTEST'],
                                 'GoogleTest not found; install libgtest-dev')


def _glob(bld, *patterns):
    """Paths (strings, relative to this folder) of the files matching the patterns."""
    files = []
    for pattern in patterns:
        files.extend(node.path_from(bld.path) for node in bld.path.ant_glob(pattern))
    return sorted(set(files))


def _stem(path):
    name = path.split('/')[-1]
    return name[:-3] if name.endswith('.cc') else name


def _use(task_gen, *names):
    # Assign a new list: create_ns3_program's `use` is the same list object as its
    # ns3_module_dependencies, which must keep naming ns-3 modules only.
    task_gen.use = list(getattr(task_gen, 'use', None) or []) + list(names)


def build(bld):
    if IB_MODULE in bld.env['MODULES_NOT_BUILT']:
        return

    module = bld.create_ns3_module(IB_MODULE, IB_DEPENDENCIES)
    module.source = _glob(bld, 'model/**/*.cc', 'helper/*.cc')
    _use(module, 'BOOST', 'IBCXX17')

    headers = bld(features='ns3header')
    headers.module = IB_MODULE
    headers.source = [h for h in _glob(bld, 'model/**/*.h', 'helper/*.h')
                      if not h.endswith('-internal.h')]

    if bld.env['ENABLE_TESTS']:
        # ns-3 TestSuite sources (run by test.py), if the module has any.
        suite_sources = _glob(bld, 'test/*-test-suite.cc')
        if suite_sources:
            module_test = bld.create_ns3_module_test_library(IB_MODULE)
            module_test.source = suite_sources
            _use(module_test, 'BOOST', 'IBCXX17')

        # The GoogleTest suite: build/<...>/infiniband-gtest.
        gtest_sources = _glob(bld, 'test/*-test.cc', 'test/*-util.cc')
        if gtest_sources and bld.env['ENABLE_INFINIBAND_GTEST']:
            gtest = bld.create_ns3_program('infiniband-gtest', [IB_MODULE] + IB_DEPENDENCIES)
            gtest.source = gtest_sources
            _use(gtest, 'BOOST', 'GTEST', 'IBCXX17')
            gtest.defines = ['IB_TSHARK_TESTS=1',
                             'IB_SOURCE_DIR="%s"' % bld.path.abspath()]

    if bld.env['ENABLE_EXAMPLES']:
        for source in _glob(bld, 'examples/*.cc'):
            example = bld.create_ns3_program(_stem(source), [IB_MODULE] + IB_DEPENDENCIES)
            example.source = source
            _use(example, 'BOOST', 'IBCXX17')

    for source in _glob(bld, 'utils/*.cc'):
        program = bld.create_ns3_program(_stem(source), [IB_MODULE] + IB_DEPENDENCIES)
        program.source = source
        _use(program, 'BOOST', 'IBCXX17')
