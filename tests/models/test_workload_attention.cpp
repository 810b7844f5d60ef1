// P12: naive vs flash attention, simulated (DRAM bytes from GpuModel), and the online-softmax order
// of the flash kernels checked against the direct formula with Eigen.
#include <gtest/gtest.h>

#include <cmath>
#include <eigen3/Eigen/Dense>
#include <random>
#include <vector>

#include "models/analytic/workload_run.hpp"
#include "sim/config.hpp"
#include "tests/test_paths.hpp"

using namespace gtsim;

namespace {
using gtsim::testing::src;
}  // namespace

// The issue's point, simulated: naive attention writes S = Q K^T (f32) and P = softmax(S) to HBM and
// reads them back, T x T per head, while flash attention streams Q, K, V once and writes O: naive's
// DRAM bytes grow as T^2 and flash's as T, so their ratio grows with T (~T / 50 at d = 64). That
// holds once S and P do not fit in the L2 (on the whole H200, with its 60 MB L2, a head's S at T = 512
// stays in the L2 and never reaches DRAM). One head (B = H = 1) on an H200 whose L2 is cut to 2 MB:
// S is 1 MB at T = 512 and 16 MB (8x the L2) at T = 2048, where naive must move at least 20x flash's
// bytes. Bytes per head do not depend on the number of heads, so this is the B x H = 64 case's ratio.
TEST(WorkloadAttention, NaiveMovesManyTimesFlashBytesGrowingWithTOnceSExceedsTheL2) {
  auto hw = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"), {"l2.size_bytes=2097152"});
  std::vector<double> ratio;
  for (int64_t T : {512, 1024, 2048}) {
    const std::map<std::string, int64_t> p{{"B", 1}, {"H", 1}, {"T", T}};
    auto naive = wl::Workload::load_file(src("kernels_ir/workloads/attention_naive.yaml"), p);
    auto flash = wl::Workload::load_file(src("kernels_ir/workloads/attention_flash.yaml"), p);
    analytic::WorkloadRunOptions o;
    auto rn = analytic::run_workload(*hw, naive, o);
    auto rf = analytic::run_workload(*hw, flash, o);
    ratio.push_back(double(rn.dram_bytes) / double(rf.dram_bytes));
    if (ratio.size() > 1) {
      EXPECT_GT(ratio.back(), 1.5 * ratio[ratio.size() - 2]) << "T=" << T << "\n" << rn.text << rf.text;
    }
  }
  EXPECT_GE(ratio.back(), 20.0);
}

// Online softmax (flash order): key tiles of Bc, running max m, running sum l, accumulator rescaled
// by exp(m_old - m_new); the result equals softmax(Q K^T / sqrt(d)) V computed directly.
TEST(WorkloadAttention, OnlineSoftmaxOrderGivesTheDirectFormula) {
  const int T = 96, d = 16, Bc = 32;
  std::mt19937 rng(7);
  std::normal_distribution<double> nd(0, 1);
  Eigen::MatrixXd Q(T, d), K(T, d), V(T, d);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < d; ++j) Q(i, j) = nd(rng), K(i, j) = 2 * nd(rng), V(i, j) = nd(rng);
  const double scale = 1.0 / std::sqrt(double(d));
  Eigen::MatrixXd S = (Q * K.transpose()) * scale;
  Eigen::MatrixXd P = (S.colwise() - S.rowwise().maxCoeff()).array().exp().matrix();
  Eigen::VectorXd rowsum = P.rowwise().sum();
  Eigen::MatrixXd direct = (P * V).array().colwise() / rowsum.array();
  Eigen::MatrixXd O = Eigen::MatrixXd::Zero(T, d);
  Eigen::VectorXd m = Eigen::VectorXd::Constant(T, -INFINITY), l = Eigen::VectorXd::Zero(T);
  for (int j0 = 0; j0 < T; j0 += Bc) {
    Eigen::MatrixXd Sj = (Q * K.middleRows(j0, Bc).transpose()) * scale;
    Eigen::VectorXd mn = m.cwiseMax(Sj.rowwise().maxCoeff());
    Eigen::VectorXd alpha = (m - mn).array().exp();
    Eigen::MatrixXd Pj = (Sj.colwise() - mn).array().exp().matrix();
    l = alpha.cwiseProduct(l) + Pj.rowwise().sum();
    O = alpha.asDiagonal() * O + Pj * V.middleRows(j0, Bc);
    m = mn;
  }
  O = l.cwiseInverse().asDiagonal() * O;
  EXPECT_LT((O - direct).cwiseAbs().maxCoeff(), 1e-12);
  // Backward recomputation (flash_attention_bwd.kir): P rebuilt from the saved log-sum-exp equals
  // the stored probabilities.
  Eigen::VectorXd lse = m.array() + l.array().log();
  Eigen::MatrixXd Pre = (S.colwise() - lse).array().exp().matrix();
  Eigen::MatrixXd Pdirect = P.array().colwise() / rowsum.array();
  EXPECT_LT((Pre - Pdirect).cwiseAbs().maxCoeff(), 1e-12);
}

// The flash backward node lowers to flash_attention_bwd.kir: it recomputes the score tiles (no
// T x T tensor in HBM) and does 2.5x the forward's matmul FLOPs, so it takes longer than the forward.
TEST(WorkloadAttention, FlashBackwardRunsAndRecomputesTheTiles) {
  auto hw = ConfigNode::load_file(src("hw_configs/h200-sxm.yaml"));
  const std::string y = R"(name: fb
params: {B: 1, H: 8, T: 256, d: 64}
tensors:
  q: {dtype: bf16, shape: [B, H, T, d]}
  k: {dtype: bf16, shape: [B, H, T, d]}
  v: {dtype: bf16, shape: [B, H, T, d]}
ops:
  - {name: attn, op: attention, q: q, k: k, v: v, out: o, impl: flash, backward: true}
)";
  auto w = wl::Workload::load_string(y, "fb.yaml");
  auto r = analytic::run_workload(*hw, w, analytic::WorkloadRunOptions{});
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[1].kernel, "flash_attention_bwd");
  EXPECT_GT(r.kernels[1].time_us, r.kernels[0].time_us) << r.text;
  const double tensor = 8.0 * 256 * 64 * 2;
  EXPECT_LT(double(r.kernels[1].dram_read_bytes + r.kernels[1].dram_write_bytes), 16 * tensor) << r.text;  // no T x T
}
