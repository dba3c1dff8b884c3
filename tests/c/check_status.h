// CHECK(call) for the test programs whose library calls return an integer status, 0 for
// success (rocSPARSE's, rocRAND's, HIP's): anything else prints the call and its status and
// returns 1 from main.
#pragma once
#include <cstdio>

#define CHECK(call)                                       \
    do {                                                  \
        int status_ = (int)(call);                        \
        if (status_ != 0) {                               \
            std::printf("FAIL %s: %d\n", #call, status_); \
            return 1;                                     \
        }                                                 \
    } while (0)
