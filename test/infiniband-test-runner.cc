/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// ns-3's test runner for the standalone build (an ns-3 source tree has its own
// test-runner): `build/infiniband-test-runner --suite=infiniband [--verbose]`.

#include "ns3/test.h"

int
main(int argc, char** argv)
{
    return ns3::TestRunner::Run(argc, argv);
}
