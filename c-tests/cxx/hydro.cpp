// hydro: a 2D compressible hydrodynamics proxy in C++, written the way a
// C++ code team writes one (RAII owners of every MPI object, templates,
// lambdas, exceptions from an error handler), so that the tools meet the
// C++ MPI idioms our users' codes have.
//
// It solves the Euler equations on a unit box with a first-order Rusanov
// (local Lax-Friedrichs) finite-volume scheme: an off-centre blast wave in
// a box with reflecting walls. The walls let no mass or energy through, so
// both are conserved to rounding, which is what the run checks.
//
// MPI it uses: MPI_Dims_create and a non-periodic MPI_Cart_create,
// MPI_Cart_shift (MPI_PROC_NULL at the walls), a cell datatype built with
// MPI_Type_create_struct and resized, a strided column (MPI_Type_vector)
// and a contiguous row, a persistent halo exchange (MPI_Send_init,
// MPI_Recv_init, MPI_Startall, MPI_Waitall) in all four directions, the
// time step by MPI_Allreduce(MPI_MAX), the peak pressure and where it is
// by a user-defined MPI_Op on a struct datatype, conservation sums by
// MPI_Allreduce, and the density field gathered to rank 0 by MPI_Gatherv
// for a checksum in global order: every cell's update is the same
// arithmetic on any decomposition, so the checksum is the same at any rank
// count.
//
// usage: hydro [NX NY STEPS]   (default 96 64 40)
// prints: hydro: grid NXxNY on PXxPY ranks, STEPS steps
//         hydro: peak pressure P at (I, J)
//         hydro: mass drift D energy drift E
//         hydro: checksum C
//         hydro: verified yes|no
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr double kGamma = 1.4;
constexpr double kCfl = 0.4;

// Throws on an MPI error: the world communicator returns errors.
void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        throw std::runtime_error(std::string(what) + ": " + std::string(text, len));
    }
}

// Owns an MPI handle: frees it with `Free` when it goes out of scope.
// (Open MPI's null handles are addresses, not constant expressions, so
// ownership is a flag rather than a comparison with the null handle.)
template <typename Handle, int (*Free)(Handle *)>
class Owned {
  public:
    Owned() = default;
    explicit Owned(Handle h) : h_(h), live_(true) {}
    Owned(const Owned &) = delete;
    Owned &operator=(const Owned &) = delete;
    Owned(Owned &&o) noexcept : h_(o.h_), live_(std::exchange(o.live_, false)) {}
    Owned &operator=(Owned &&o) noexcept
    {
        std::swap(h_, o.h_);
        std::swap(live_, o.live_);
        return *this;
    }
    ~Owned()
    {
        if (live_) {
            Free(&h_);
        }
    }
    Handle get() const { return h_; }
    // Where an MPI call creates the handle; it is owned from then on.
    Handle *out()
    {
        live_ = true;
        return &h_;
    }

  private:
    Handle h_{};
    bool live_ = false;
};

int free_comm(MPI_Comm *c) { return MPI_Comm_free(c); }
int free_type(MPI_Datatype *t) { return MPI_Type_free(t); }
int free_op(MPI_Op *o) { return MPI_Op_free(o); }
int free_request(MPI_Request *r) { return MPI_Request_free(r); }

using Comm = Owned<MPI_Comm, free_comm>;
using Type = Owned<MPI_Datatype, free_type>;
using Op = Owned<MPI_Op, free_op>;
using Request = Owned<MPI_Request, free_request>;

// A committed datatype.
Type committed(MPI_Datatype t)
{
    check(MPI_Type_commit(&t), "MPI_Type_commit");
    return Type(t);
}

// The conserved state of one cell.
struct Cell {
    double rho, mx, my, e;
};

// The largest pressure and the global cell holding it.
struct Peak {
    double p;
    int gi, gj;
};

// Keeps the larger pressure; a tie goes to the cell first in global order,
// so that the answer does not depend on the decomposition.
void peak_max(void *in, void *inout, int *len, MPI_Datatype *)
{
    auto *a = static_cast<const Peak *>(in);
    auto *b = static_cast<Peak *>(inout);
    for (int k = 0; k < *len; ++k) {
        bool first = a[k].gj < b[k].gj || (a[k].gj == b[k].gj && a[k].gi < b[k].gi);
        if (a[k].p > b[k].p || (a[k].p == b[k].p && first)) {
            b[k] = a[k];
        }
    }
}

double pressure(const Cell &c)
{
    return (kGamma - 1.0) * (c.e - 0.5 * (c.mx * c.mx + c.my * c.my) / c.rho);
}

// The Rusanov flux across a face whose normal is x (`y` false) or y.
Cell flux(const Cell &l, const Cell &r, bool y)
{
    auto physical = [y](const Cell &c, double &speed) {
        double p = pressure(c);
        double u = (y ? c.my : c.mx) / c.rho;
        speed = std::fabs(u) + std::sqrt(kGamma * p / c.rho);
        Cell f{c.rho * u, c.mx * u, c.my * u, (c.e + p) * u};
        (y ? f.my : f.mx) += p;
        return f;
    };
    double sl = 0, sr = 0;
    Cell fl = physical(l, sl), fr = physical(r, sr);
    double a = std::max(sl, sr);
    return {0.5 * (fl.rho + fr.rho) - 0.5 * a * (r.rho - l.rho),
            0.5 * (fl.mx + fr.mx) - 0.5 * a * (r.mx - l.mx),
            0.5 * (fl.my + fr.my) - 0.5 * a * (r.my - l.my),
            0.5 * (fl.e + fr.e) - 0.5 * a * (r.e - l.e)};
}

// Where block `coord` of `parts` starts along an axis of `n` cells.
int block_start(int n, int parts, int coord)
{
    return coord * (n / parts) + std::min(coord, n % parts);
}

int block_size(int n, int parts, int coord)
{
    return n / parts + (coord < n % parts ? 1 : 0);
}

class Hydro {
  public:
    Hydro(int nx, int ny) : nx_(nx), ny_(ny)
    {
        check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
        check(MPI_Dims_create(size_, 2, dims_.data()), "MPI_Dims_create");
        std::array<int, 2> periods{0, 0};
        check(MPI_Cart_create(MPI_COMM_WORLD, 2, dims_.data(), periods.data(), 0, cart_.out()),
              "MPI_Cart_create");
        check(MPI_Comm_rank(cart_.get(), &rank_), "MPI_Comm_rank");
        check(MPI_Cart_coords(cart_.get(), rank_, 2, coords_.data()), "MPI_Cart_coords");
        check(MPI_Cart_shift(cart_.get(), 0, 1, &west_, &east_), "MPI_Cart_shift");
        check(MPI_Cart_shift(cart_.get(), 1, 1, &south_, &north_), "MPI_Cart_shift");
        i0_ = block_start(nx_, dims_[0], coords_[0]);
        j0_ = block_start(ny_, dims_[1], coords_[1]);
        lnx_ = block_size(nx_, dims_[0], coords_[0]);
        lny_ = block_size(ny_, dims_[1], coords_[1]);
        u_.resize(static_cast<size_t>(lnx_ + 2) * (lny_ + 2));
        next_ = u_;
        make_types();
        make_halo();
        initialise();
    }

    // Advances `steps` time steps.
    void run(int steps)
    {
        for (int s = 0; s < steps; ++s) {
            exchange();
            double dt = time_step();
            update(dt);
        }
        exchange();
    }

    // Sums of mass and energy over the whole box.
    std::pair<double, double> totals() const
    {
        std::array<double, 2> local{0, 0}, global{0, 0};
        for (int j = 1; j <= lny_; ++j) {
            for (int i = 1; i <= lnx_; ++i) {
                local[0] += at(i, j).rho;
                local[1] += at(i, j).e;
            }
        }
        check(MPI_Allreduce(local.data(), global.data(), 2, MPI_DOUBLE, MPI_SUM, cart_.get()),
              "MPI_Allreduce");
        return {global[0] * dx() * dy(), global[1] * dx() * dy()};
    }

    // Whether every cell holds a positive density and pressure.
    bool physical() const
    {
        int ok = 1, all = 0;
        for (int j = 1; j <= lny_; ++j) {
            for (int i = 1; i <= lnx_; ++i) {
                const Cell &c = at(i, j);
                if (!(c.rho > 0) || !(pressure(c) > 0)) {
                    ok = 0;
                }
            }
        }
        check(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, cart_.get()), "MPI_Allreduce");
        return all != 0;
    }

    // The largest pressure and its global cell, on every rank.
    Peak peak() const
    {
        Peak mine{-1, 0, 0};
        for (int j = 1; j <= lny_; ++j) {
            for (int i = 1; i <= lnx_; ++i) {
                Peak here{pressure(at(i, j)), i0_ + i - 1, j0_ + j - 1};
                int one = 1;
                MPI_Datatype none = MPI_DATATYPE_NULL;
                peak_max(&here, &mine, &one, &none);
            }
        }
        Peak all{};
        check(MPI_Allreduce(&mine, &all, 1, peak_type_.get(), peak_op_.get(), cart_.get()),
              "MPI_Allreduce");
        return all;
    }

    // The density field in global order, weighted by position, on rank 0
    // (0 elsewhere).
    double checksum() const
    {
        std::vector<double> mine;
        mine.reserve(static_cast<size_t>(lnx_) * lny_);
        for (int j = 1; j <= lny_; ++j) {
            for (int i = 1; i <= lnx_; ++i) {
                mine.push_back(at(i, j).rho);
            }
        }
        std::vector<int> counts, displs;
        std::vector<double> all;
        if (rank_ == 0) {
            counts.resize(size_);
            displs.resize(size_);
            for (int r = 0, at = 0; r < size_; ++r) {
                std::array<int, 2> c{};
                check(MPI_Cart_coords(cart_.get(), r, 2, c.data()), "MPI_Cart_coords");
                counts[r] = block_size(nx_, dims_[0], c[0]) * block_size(ny_, dims_[1], c[1]);
                displs[r] = at;
                at += counts[r];
            }
            all.resize(static_cast<size_t>(nx_) * ny_);
        }
        check(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                          counts.data(), displs.data(), MPI_DOUBLE, 0, cart_.get()),
              "MPI_Gatherv");
        if (rank_ != 0) {
            return 0;
        }
        std::vector<double> global(all.size());
        for (int r = 0; r < size_; ++r) {
            std::array<int, 2> c{};
            check(MPI_Cart_coords(cart_.get(), r, 2, c.data()), "MPI_Cart_coords");
            int bi = block_start(nx_, dims_[0], c[0]), bj = block_start(ny_, dims_[1], c[1]);
            int bnx = block_size(nx_, dims_[0], c[0]), bny = block_size(ny_, dims_[1], c[1]);
            for (int j = 0; j < bny; ++j) {
                for (int i = 0; i < bnx; ++i) {
                    global[static_cast<size_t>(bj + j) * nx_ + bi + i] =
                        all[static_cast<size_t>(displs[r]) + static_cast<size_t>(j) * bnx + i];
                }
            }
        }
        double sum = 0;
        for (size_t k = 0; k < global.size(); ++k) {
            sum += global[k] * static_cast<double>(k % 97 + 1);
        }
        return sum;
    }

    int rank() const { return rank_; }
    const std::array<int, 2> &dims() const { return dims_; }

  private:
    Cell &at(int i, int j) { return u_[static_cast<size_t>(j) * (lnx_ + 2) + i]; }
    const Cell &at(int i, int j) const { return u_[static_cast<size_t>(j) * (lnx_ + 2) + i]; }
    double dx() const { return 1.0 / nx_; }
    double dy() const { return 1.0 / ny_; }

    void make_types()
    {
        int length = 4;
        MPI_Aint offset = offsetof(Cell, rho);
        MPI_Datatype dbl = MPI_DOUBLE, raw = MPI_DATATYPE_NULL, cell = MPI_DATATYPE_NULL;
        check(MPI_Type_create_struct(1, &length, &offset, &dbl, &raw), "MPI_Type_create_struct");
        Type packed(raw);
        check(MPI_Type_create_resized(packed.get(), 0, sizeof(Cell), &cell), "MPI_Type_create_resized");
        cell_ = committed(cell);
        MPI_Datatype column = MPI_DATATYPE_NULL, row = MPI_DATATYPE_NULL;
        check(MPI_Type_vector(lny_, 1, lnx_ + 2, cell_.get(), &column), "MPI_Type_vector");
        column_ = committed(column);
        check(MPI_Type_contiguous(lnx_, cell_.get(), &row), "MPI_Type_contiguous");
        row_ = committed(row);

        std::array<int, 2> lengths{1, 2};
        std::array<MPI_Aint, 2> offsets{offsetof(Peak, p), offsetof(Peak, gi)};
        std::array<MPI_Datatype, 2> types{MPI_DOUBLE, MPI_INT};
        MPI_Datatype peak = MPI_DATATYPE_NULL, sized = MPI_DATATYPE_NULL;
        check(MPI_Type_create_struct(2, lengths.data(), offsets.data(), types.data(), &peak),
              "MPI_Type_create_struct");
        Type unsized(peak);
        check(MPI_Type_create_resized(unsized.get(), 0, sizeof(Peak), &sized), "MPI_Type_create_resized");
        peak_type_ = committed(sized);
        check(MPI_Op_create(peak_max, 1, peak_op_.out()), "MPI_Op_create");
    }

    // One persistent receive into each ghost side and one send from each
    // boundary side; at a wall the neighbour is MPI_PROC_NULL.
    void make_halo()
    {
        struct Side {
            int peer;
            MPI_Datatype type;
            int send_i, send_j, recv_i, recv_j, tag;
        };
        const std::array<Side, 4> sides{{
            {west_, column_.get(), 1, 1, 0, 1, 0},
            {east_, column_.get(), lnx_, 1, lnx_ + 1, 1, 1},
            {south_, row_.get(), 1, 1, 1, 0, 2},
            {north_, row_.get(), 1, lny_, 1, lny_ + 1, 3},
        }};
        for (const Side &s : sides) {
            // A message sent towards a side arrives through the opposite
            // side of the neighbour: tags 0/1 and 2/3 pair up.
            int opposite = s.tag ^ 1;
            Request recv, send;
            check(MPI_Recv_init(&at(s.recv_i, s.recv_j), 1, s.type, s.peer, opposite, cart_.get(),
                                recv.out()),
                  "MPI_Recv_init");
            check(MPI_Send_init(&at(s.send_i, s.send_j), 1, s.type, s.peer, s.tag, cart_.get(),
                                send.out()),
                  "MPI_Send_init");
            halo_.push_back(std::move(recv));
            halo_.push_back(std::move(send));
        }
    }

    void initialise()
    {
        for (int j = 1; j <= lny_; ++j) {
            for (int i = 1; i <= lnx_; ++i) {
                double x = (i0_ + i - 0.5) * dx(), y = (j0_ + j - 0.5) * dy();
                double r2 = (x - 0.3) * (x - 0.3) + (y - 0.4) * (y - 0.4);
                double rho = r2 < 0.02 ? 1.0 : 0.125;
                double p = r2 < 0.02 ? 10.0 : 0.1;
                at(i, j) = {rho, 0.0, 0.0, p / (kGamma - 1.0)};
            }
        }
    }

    // Fills the ghost cells: from the neighbours, or as a mirror of the
    // boundary with its normal momentum reversed at a wall.
    void exchange()
    {
        std::vector<MPI_Request> requests;
        for (const Request &r : halo_) {
            requests.push_back(r.get());
        }
        check(MPI_Startall(static_cast<int>(requests.size()), requests.data()), "MPI_Startall");
        check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
        auto wall = [](Cell c, bool y) {
            (y ? c.my : c.mx) = -(y ? c.my : c.mx);
            return c;
        };
        for (int j = 1; j <= lny_; ++j) {
            if (west_ == MPI_PROC_NULL) at(0, j) = wall(at(1, j), false);
            if (east_ == MPI_PROC_NULL) at(lnx_ + 1, j) = wall(at(lnx_, j), false);
        }
        for (int i = 1; i <= lnx_; ++i) {
            if (south_ == MPI_PROC_NULL) at(i, 0) = wall(at(i, 1), true);
            if (north_ == MPI_PROC_NULL) at(i, lny_ + 1) = wall(at(i, lny_), true);
        }
    }

    double time_step() const
    {
        double fastest = 0;
        for (int j = 1; j <= lny_; ++j) {
            for (int i = 1; i <= lnx_; ++i) {
                const Cell &c = at(i, j);
                double sound = std::sqrt(kGamma * pressure(c) / c.rho);
                fastest = std::max({fastest, std::fabs(c.mx / c.rho) + sound, std::fabs(c.my / c.rho) + sound});
            }
        }
        double global = 0;
        check(MPI_Allreduce(&fastest, &global, 1, MPI_DOUBLE, MPI_MAX, cart_.get()), "MPI_Allreduce");
        return kCfl * std::min(dx(), dy()) / global;
    }

    void update(double dt)
    {
        double ax = dt / dx(), ay = dt / dy();
        for (int j = 1; j <= lny_; ++j) {
            for (int i = 1; i <= lnx_; ++i) {
                Cell w = flux(at(i - 1, j), at(i, j), false), e = flux(at(i, j), at(i + 1, j), false);
                Cell s = flux(at(i, j - 1), at(i, j), true), n = flux(at(i, j), at(i, j + 1), true);
                const Cell &c = at(i, j);
                next_[static_cast<size_t>(j) * (lnx_ + 2) + i] = {
                    c.rho - ax * (e.rho - w.rho) - ay * (n.rho - s.rho),
                    c.mx - ax * (e.mx - w.mx) - ay * (n.mx - s.mx),
                    c.my - ax * (e.my - w.my) - ay * (n.my - s.my),
                    c.e - ax * (e.e - w.e) - ay * (n.e - s.e)};
            }
        }
        // The persistent requests name `u_`'s cells: copy, do not swap.
        for (int j = 1; j <= lny_; ++j) {
            std::copy_n(&next_[static_cast<size_t>(j) * (lnx_ + 2) + 1], lnx_, &at(1, j));
        }
    }

    int nx_, ny_, size_ = 0, rank_ = 0;
    std::array<int, 2> dims_{0, 0}, coords_{0, 0};
    int west_ = MPI_PROC_NULL, east_ = MPI_PROC_NULL, south_ = MPI_PROC_NULL, north_ = MPI_PROC_NULL;
    int i0_ = 0, j0_ = 0, lnx_ = 0, lny_ = 0;
    std::vector<Cell> u_, next_;
    Comm cart_;
    Type cell_, column_, row_, peak_type_;
    Op peak_op_;
    std::vector<Request> halo_;
};

int run(int argc, char **argv)
{
    int nx = argc > 3 ? std::atoi(argv[1]) : 96;
    int ny = argc > 3 ? std::atoi(argv[2]) : 64;
    int steps = argc > 3 ? std::atoi(argv[3]) : 40;
    Hydro hydro(nx, ny);
    auto [mass0, energy0] = hydro.totals();
    double start = MPI_Wtime();
    hydro.run(steps);
    double seconds = MPI_Wtime() - start;
    auto [mass, energy] = hydro.totals();
    Peak peak = hydro.peak();
    bool physical = hydro.physical();
    double sum = hydro.checksum();
    double dmass = std::fabs(mass - mass0) / mass0, denergy = std::fabs(energy - energy0) / energy0;
    if (hydro.rank() == 0) {
        std::printf("hydro: grid %dx%d on %dx%d ranks, %d steps, %.3f s\n", nx, ny, hydro.dims()[0],
                    hydro.dims()[1], steps, seconds);
        std::printf("hydro: peak pressure %.6f at (%d, %d)\n", peak.p, peak.gi, peak.gj);
        std::printf("hydro: mass drift %.3e energy drift %.3e\n", dmass, denergy);
        std::printf("hydro: checksum %.17g\n", sum);
        bool ok = physical && dmass < 1e-12 && denergy < 1e-12;
        std::printf("hydro: verified %s\n", ok ? "yes" : "no");
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = 0;
    try {
        rc = run(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hydro: %s\n", e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return rc;
}
