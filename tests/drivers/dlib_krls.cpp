// Prequential predictions of dlib::krls: read "n d gamma tolerance", then n rows of d
// inputs and a target; print f(x) before learning each row, then the dictionary size.
#include <cmath>
#include <cstdio>
#include <dlib/matrix.h>
#include <dlib/svm/krls.h>

typedef dlib::matrix<double, 0, 1> sample;

// dlib's krls adds 0.01 to every kernel value; this kernel takes it away again, so that
// krls runs with the plain Gaussian kernel exp(-gamma |a - b|^2).
struct gaussian {
    typedef double scalar_type;
    typedef sample sample_type;
    typedef dlib::default_memory_manager mem_manager_type;
    double gamma;
    gaussian() : gamma(1.0) {}
    explicit gaussian(double g) : gamma(g) {}
    double operator()(const sample& a, const sample& b) const {
        return std::exp(-gamma * dlib::length_squared(a - b)) - 0.01;
    }
    bool operator==(const gaussian& k) const { return gamma == k.gamma; }
};

int main() {
    long n, d;
    double gamma, tolerance;
    if (std::scanf("%ld %ld %lf %lf", &n, &d, &gamma, &tolerance) != 4) return 2;
    dlib::krls<gaussian> model(gaussian(gamma), tolerance);
    sample x(d);
    for (long i = 0; i < n; ++i) {
        double y;
        for (long j = 0; j < d; ++j)
            if (std::scanf("%lf", &x(j)) != 1) return 2;
        if (std::scanf("%lf", &y) != 1) return 2;
        std::printf("%.17g\n", model(x) + 0.0);
        model.train(x, y);
    }
    std::printf("%lu\n", model.dictionary_size());
    return 0;
}
