// Debian's rocSPARSE (librocsparse0, its shipped gfx1030 machine code), unmodified, through
// Debian's HIP on the drop-in: CSR SpMV (rocsparse_scsrmv) and CSR to dense
// (rocsparse_scsr2dense) on a random matrix, each checked against a plain CPU computation.
// tests/soft_drop_in.rs builds it with the system C++ compiler and checks every line it prints.
#include <hip/hip_runtime_api.h>
#include <rocsparse/rocsparse.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "check_status.h"

int main() {
    const int m = 4000, n = 3000;
    unsigned seed = 12345;
    auto next = [&] {
        seed = seed * 1664525u + 1013904223u;
        return seed >> 8;
    };
    // Up to 16 nonzeros per row, sorted distinct columns, values in [-1, 1].
    std::vector<int> row_ptr(m + 1, 0), cols;
    std::vector<float> vals;
    for (int r = 0; r < m; ++r) {
        std::vector<int> row;
        for (unsigned k = 0, count = next() % 17; k < count; ++k) row.push_back((int)(next() % n));
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
        for (int c : row) {
            cols.push_back(c);
            vals.push_back((float)(next() % 2001) / 1000.0f - 1.0f);
        }
        row_ptr[r + 1] = (int)cols.size();
    }
    const int nnz = (int)cols.size();
    std::vector<float> x(n), y(m);
    for (auto &v : x) v = (float)(next() % 1001) / 500.0f - 1.0f;
    for (auto &v : y) v = (float)(next() % 1001) / 500.0f - 1.0f;
    const float alpha = 1.5f, beta = -0.25f;

    auto started = std::chrono::steady_clock::now();
    std::vector<float> want(m);
    for (int r = 0; r < m; ++r) {
        double sum = 0.0;
        for (int i = row_ptr[r]; i < row_ptr[r + 1]; ++i) sum += (double)vals[i] * x[cols[i]];
        want[r] = (float)(alpha * sum + beta * y[r]);
    }
    double cpu_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();

    int *d_row_ptr, *d_cols;
    float *d_vals, *d_x, *d_y, *d_dense;
    CHECK(hipMalloc(&d_row_ptr, (m + 1) * sizeof(int)));
    CHECK(hipMalloc(&d_cols, nnz * sizeof(int)));
    CHECK(hipMalloc(&d_vals, nnz * sizeof(float)));
    CHECK(hipMalloc(&d_x, n * sizeof(float)));
    CHECK(hipMalloc(&d_y, m * sizeof(float)));
    CHECK(hipMemcpy(d_row_ptr, row_ptr.data(), (m + 1) * sizeof(int), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_cols, cols.data(), nnz * sizeof(int), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_vals, vals.data(), nnz * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_x, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(d_y, y.data(), m * sizeof(float), hipMemcpyHostToDevice));

    rocsparse_handle handle;
    rocsparse_mat_descr descr;
    CHECK(rocsparse_create_handle(&handle));
    CHECK(rocsparse_create_mat_descr(&descr));
    // Twice from the same y: the first call loads rocSPARSE's code object, the second is timed.
    double spmv_us = 0.0;
    for (int round = 0; round < 2; ++round) {
        CHECK(hipMemcpy(d_y, y.data(), m * sizeof(float), hipMemcpyHostToDevice));
        started = std::chrono::steady_clock::now();
        CHECK(rocsparse_scsrmv(handle, rocsparse_operation_none, m, n, nnz, &alpha, descr, d_vals, d_row_ptr, d_cols,
                               nullptr, d_x, &beta, d_y));
        CHECK(hipDeviceSynchronize());
        spmv_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
    }
    std::vector<float> got(m);
    CHECK(hipMemcpy(got.data(), d_y, m * sizeof(float), hipMemcpyDeviceToHost));
    double worst = 0.0;
    for (int r = 0; r < m; ++r) worst = std::max(worst, (double)std::fabs(got[r] - want[r]) / (1.0 + std::fabs(want[r])));
    std::printf("csrmv %s\n", worst < 1e-5 ? "ok" : "MISMATCH");
    std::fprintf(stderr, "csrmv %d x %d, %d nonzeros: %.0f us on the drop-in, %.0f us a plain CPU loop; largest error %.3g\n",
                 m, n, nnz, spmv_us, cpu_us, worst);

    // The first 500 rows as a dense column-major block.
    const int rows = 500;
    CHECK(hipMalloc(&d_dense, (size_t)rows * n * sizeof(float)));
    CHECK(rocsparse_scsr2dense(handle, rows, n, descr, d_vals, d_row_ptr, d_cols, d_dense, rows));
    std::vector<float> dense((size_t)rows * n, -7.0f), expected((size_t)rows * n, 0.0f);
    CHECK(hipMemcpy(dense.data(), d_dense, dense.size() * sizeof(float), hipMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r)
        for (int i = row_ptr[r]; i < row_ptr[r + 1]; ++i) expected[(size_t)cols[i] * rows + r] = vals[i];
    std::printf("csr2dense %s\n", dense == expected ? "ok" : "MISMATCH");

    CHECK(rocsparse_destroy_mat_descr(descr));
    CHECK(rocsparse_destroy_handle(handle));
    for (void *p : {(void *)d_row_ptr, (void *)d_cols, (void *)d_vals, (void *)d_x, (void *)d_y, (void *)d_dense})
        CHECK(hipFree(p));
    std::printf("done\n");
    return 0;
}
