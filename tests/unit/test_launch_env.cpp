// Launch-environment parsing for every launcher ddpbench supports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "common/testutil.hpp"
#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "core/util/parse.hpp"
#include "core/util/utf8.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

using testutil::usage_error;

std::string launch_error(const EnvMap& env) {
  const std::string m = usage_error([&] { detect_launch(env); });
  return m.empty() ? "(no error)" : m;
}

TEST(LaunchEnv, NoLauncherMeansLocalSpawn) {
  const auto li = detect_launch({{"HOME", "/root"}, {"PATH", "/usr/bin"}});
  EXPECT_EQ(li.launcher, Launcher::kNone);
  EXPECT_EQ(li.world_size, 1);
  EXPECT_EQ(li.rank, 0);
}

TEST(LaunchEnv, Torchrun) {
  const auto li = detect_launch({{"RANK", "5"},
                                 {"WORLD_SIZE", "8"},
                                 {"LOCAL_RANK", "1"},
                                 {"LOCAL_WORLD_SIZE", "4"},
                                 {"MASTER_ADDR", "node7"},
                                 {"MASTER_PORT", "29411"}});
  EXPECT_EQ(li.launcher, Launcher::kTorchrun);
  EXPECT_EQ(li.rank, 5);
  EXPECT_EQ(li.world_size, 8);
  EXPECT_EQ(li.local_rank, 1);
  EXPECT_EQ(li.local_world_size, 4);
  EXPECT_EQ(li.master_addr, "node7");
  EXPECT_EQ(li.master_port, 29411);
  EXPECT_FALSE(li.use_agent_store);
}

TEST(LaunchEnv, TorchrunAgentStoreIsJoinedAsClientUnderAttemptPrefix) {
  const auto li = detect_launch({{"RANK", "0"},
                                 {"WORLD_SIZE", "2"},
                                 {"LOCAL_RANK", "0"},
                                 {"LOCAL_WORLD_SIZE", "2"},
                                 {"MASTER_ADDR", "127.0.0.1"},
                                 {"MASTER_PORT", "1234"},
                                 {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                 {"TORCHELASTIC_RESTART_COUNT", "3"}});
  EXPECT_TRUE(li.use_agent_store);
  EXPECT_EQ(li.store_prefix, "/worker/attempt_3");
}

TEST(LaunchEnv, LocalSpawnerChildIsRecognised) {
  const auto li = detect_launch({{"RANK", "1"},
                                 {"WORLD_SIZE", "2"},
                                 {"LOCAL_RANK", "1"},
                                 {"LOCAL_WORLD_SIZE", "2"},
                                 {"DDPBENCH_LOCAL_SPAWNER", "1"}});
  EXPECT_EQ(li.launcher, Launcher::kLocalSpawner);
  EXPECT_EQ(li.rank, 1);
}

TEST(LaunchEnv, HandLaunchOnLoopbackMakesAllRanksLocal) {
  const auto li = detect_launch({{"RANK", "1"}, {"WORLD_SIZE", "3"}, {"MASTER_ADDR", "127.0.0.1"}});
  EXPECT_EQ(li.local_rank, 1);
  EXPECT_EQ(li.local_world_size, 3);
}

TEST(LaunchEnv, TorchrunRejectsHalfSetAndOutOfRange) {
  EXPECT_THROW(detect_launch({{"RANK", "0"}}), UsageError);
  EXPECT_THROW(detect_launch({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), UsageError);
  EXPECT_THROW(detect_launch({{"RANK", "x"}, {"WORLD_SIZE", "2"}}), UsageError);
  EXPECT_THROW(detect_launch({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}), UsageError);
}

TEST(LaunchEnv, SlurmSrunStep) {
  const auto li = detect_launch({{"SLURM_PROCID", "6"},
                                 {"SLURM_NTASKS", "12"},
                                 {"SLURM_STEP_NUM_TASKS", "7"},
                                 {"SLURM_LOCALID", "2"},
                                 {"SLURM_STEP_ID", "0"},
                                 {"SLURM_NODEID", "2"},
                                 {"SLURM_STEP_TASKS_PER_NODE", "2(x2),3"},
                                 {"SLURM_JOB_ID", "123456"},
                                 {"SLURM_JOB_NODELIST", "gpu[017-020,031],login1"}});
  EXPECT_EQ(li.launcher, Launcher::kSlurm);
  EXPECT_EQ(li.rank, 6);
  EXPECT_EQ(li.world_size, 7);  // the step's task count wins over the job's
  EXPECT_EQ(li.local_rank, 2);
  EXPECT_EQ(li.local_world_size, 3);  // third node of "2,2,3"
  EXPECT_EQ(li.master_addr, "gpu017");
  EXPECT_EQ(li.master_port, 20000 + 3456);
  EXPECT_EQ(li.job_id, "123456");
}

TEST(LaunchEnv, SlurmMasterOverridesWin) {
  const auto li = detect_launch({{"SLURM_PROCID", "0"},
                                 {"SLURM_NTASKS", "2"},
                                 {"SLURM_STEP_ID", "1"},
                                 {"SLURM_JOB_ID", "77"},
                                 {"SLURM_JOB_NODELIST", "a[1-2]"},
                                 {"MASTER_ADDR", "10.0.0.9"},
                                 {"MASTER_PORT", "4000"}});
  EXPECT_EQ(li.master_addr, "10.0.0.9");
  EXPECT_EQ(li.master_port, 4000);
}

TEST(LaunchEnv, SlurmBatchScriptWithoutSrunIsNotRankZeroOfN) {
  // sbatch exports SLURM_PROCID=0 and SLURM_NTASKS=N to the batch script itself.
  const auto li = detect_launch({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "5"}});
  EXPECT_EQ(li.launcher, Launcher::kNone);
}

TEST(LaunchEnv, OpenMPISingleNodeDefaultsToLoopback) {
  const auto li = detect_launch({{"OMPI_COMM_WORLD_RANK", "3"},
                                 {"OMPI_COMM_WORLD_SIZE", "4"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(li.launcher, Launcher::kOpenMPI);
  EXPECT_EQ(li.rank, 3);
  EXPECT_EQ(li.world_size, 4);
  EXPECT_EQ(li.local_rank, 3);
  EXPECT_EQ(li.master_addr, "127.0.0.1");
  EXPECT_EQ(li.master_port, 29500);
}

TEST(LaunchEnv, OpenMPIOnOneNodeOfAnAllocationUsesLoopback) {
  const auto li = detect_launch({{"OMPI_COMM_WORLD_RANK", "1"},
                                 {"OMPI_COMM_WORLD_SIZE", "2"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                 {"SLURM_JOB_ID", "42"},
                                 {"SLURM_JOB_NODELIST", "n[4-5]"}});
  EXPECT_EQ(li.master_addr, "127.0.0.1");
}

TEST(LaunchEnv, OpenMPIInsideSlurmAllocationBeatsInheritedProcid) {
  const auto li = detect_launch({{"OMPI_COMM_WORLD_RANK", "5"},
                                 {"OMPI_COMM_WORLD_SIZE", "8"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                 {"SLURM_PROCID", "0"},
                                 {"SLURM_NTASKS", "8"},
                                 {"SLURM_STEP_ID", "0"},
                                 {"SLURM_JOB_ID", "42"},
                                 {"SLURM_JOB_NODELIST", "n[4-5]"}});
  EXPECT_EQ(li.launcher, Launcher::kOpenMPI);
  EXPECT_EQ(li.rank, 5);
  EXPECT_EQ(li.local_world_size, 4);
  EXPECT_EQ(li.master_addr, "n4");
  EXPECT_EQ(li.master_port, 20042);
}

TEST(LaunchEnv, OpenMPIAcrossNodesNeedsMasterAddr) {
  const EnvMap env = {{"OMPI_COMM_WORLD_RANK", "0"},
                      {"OMPI_COMM_WORLD_SIZE", "8"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}};
  EXPECT_THROW(detect_launch(env), UsageError);
  EnvMap with = env;
  with["MASTER_ADDR"] = "head";
  EXPECT_EQ(detect_launch(with).master_addr, "head");
}

TEST(LaunchEnv, PMIxOnly) {
  const EnvMap across = {{"PMIX_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "1"}};
  EnvMap with_addr = across;
  with_addr["MASTER_ADDR"] = "node0";
  const auto li = detect_launch(with_addr);
  EXPECT_EQ(li.launcher, Launcher::kPMIx);
  EXPECT_EQ(li.rank, 2);
  EXPECT_EQ(li.world_size, 4);
  EXPECT_EQ(li.master_addr, "node0");
  EXPECT_THROW(detect_launch({{"PMIX_RANK", "2"}}), UsageError);  // no size anywhere
  // Across nodes the rendezvous host is the allocation's first host, or must be given;
  // on one node it is loopback wherever the allocation starts (as for mpirun).
  EXPECT_THROW(detect_launch(across), UsageError);
  EnvMap in_alloc = across;
  in_alloc["SLURM_JOB_NODELIST"] = "gpu[03-04]";
  EXPECT_EQ(detect_launch(in_alloc).master_addr, "gpu03");
  in_alloc["MPI_LOCALNRANKS"] = "4";
  EXPECT_EQ(detect_launch(in_alloc).master_addr, "127.0.0.1");
}

TEST(SlurmHostlist, FirstHost) {
  EXPECT_EQ(slurm_first_host("node1"), "node1");
  EXPECT_EQ(slurm_first_host("node1,node2"), "node1");
  EXPECT_EQ(slurm_first_host("gpu[007-010,12]"), "gpu007");
  EXPECT_EQ(slurm_first_host("gpu[12,7-9],cpu1"), "gpu12");
  EXPECT_EQ(slurm_first_host("rack[1-2]-n[01-04]"), "rack1-n01");
  EXPECT_EQ(slurm_first_host("a-b[3-4].example"), "a-b3.example");
  EXPECT_THROW(slurm_first_host("gpu[1-2"), UsageError);
  EXPECT_THROW(slurm_first_host(""), UsageError);
}

// Malformed lists are refused with the list, what is wrong, and the fix, instead of
// yielding a host such as "1" (which resolves to 0.0.0.1) or "node".
TEST(SlurmHostlist, MalformedListsNameTheListAndTheFix) {
  const auto err = [](const std::string& l) { return usage_error([&] { slurm_first_host(l); }); };
  EXPECT_THAT(err("[1-3]"), HasSubstr("Slurm node list '[1-3]' is malformed (a '[' group must follow"));
  EXPECT_THAT(err("node[]"), HasSubstr("'[]' group is empty"));
  EXPECT_THAT(err("node[-3]"), HasSubstr("'[-3]' holds '-3', which is not a number or a range"));
  EXPECT_THAT(err("node[3-1]"), HasSubstr("the range '3-1' in '[3-1]' descends"));
  EXPECT_THAT(err("node[1-3]"), ::testing::IsEmpty());
  for (const char* l : {"node[1-2]]", "a,,b", "a,", ",a", "n[1[2]]", "n[1,]", "n[a-b]", "n[1-]"})
    EXPECT_THAT(err(l), HasSubstr("set MASTER_ADDR to the first node's address")) << l;
  // An srun step with such a list: refused at launch detection, exit 2.
  EXPECT_THAT(launch_error({{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NTASKS", "2"},
                            {"SLURM_NODELIST", "[1-3]"}}),
              HasSubstr("Slurm node list '[1-3]' is malformed"));
}

TEST(SlurmHostlist, TasksPerNode) {
  EXPECT_EQ(slurm_tasks_per_node("4"), (std::vector<int>{4}));
  EXPECT_EQ(slurm_tasks_per_node("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(slurm_tasks_per_node("8(x2)"), (std::vector<int>{8, 8}));
  EXPECT_THROW(slurm_tasks_per_node("2(3)"), UsageError);
  EXPECT_THROW(slurm_tasks_per_node("x"), UsageError);
  EXPECT_THROW(slurm_tasks_per_node("2,"), UsageError);
}

TEST(SlurmPort, DerivedFromJobId) {
  EXPECT_EQ(slurm_default_port(0), 20000);
  EXPECT_EQ(slurm_default_port(9999), 29999);
  EXPECT_EQ(slurm_default_port(10000), 20000);
  EXPECT_EQ(slurm_default_port(1234567), 24567);
}

TEST(Threads, OmpNumThreadsWins) {
  EXPECT_EQ(threads_per_rank({{"OMP_NUM_THREADS", "3"}}, Launcher::kTorchrun, 8, 64), 3);
  EXPECT_THROW(threads_per_rank({{"OMP_NUM_THREADS", "0"}}, Launcher::kNone, 1, 4), UsageError);
  EXPECT_THROW(threads_per_rank({{"OMP_NUM_THREADS", "two"}}, Launcher::kNone, 1, 4), UsageError);
}

// OpenMP's nested list: a count per level; the first is each rank's own.
TEST(Threads, OmpNumThreadsListTakesTheOuterLevel) {
  EXPECT_EQ(threads_per_rank({{"OMP_NUM_THREADS", "4,2"}}, Launcher::kNone, 1, 4), 4);
  EXPECT_EQ(threads_per_rank({{"OMP_NUM_THREADS", "3,2,1"}}, Launcher::kTorchrun, 8, 64), 3);
  EXPECT_THAT(usage_error([] { threads_per_rank({{"OMP_NUM_THREADS", "4,"}}, Launcher::kNone, 1, 4); }),
              HasSubstr("OMP_NUM_THREADS='4,' is not a thread count or OpenMP's list"));
  EXPECT_THAT(usage_error([] { threads_per_rank({{"OMP_NUM_THREADS", "0,2"}}, Launcher::kNone, 1, 4); }),
              HasSubstr("OMP_NUM_THREADS='0,2'"));
  EXPECT_THAT(usage_error([] { threads_per_rank({{"OMP_NUM_THREADS", "5000,2"}}, Launcher::kNone, 1, 4); }),
              HasSubstr("out of range"));
  EXPECT_TRUE(is_openmp_thread_list("4,2"));
  for (const char* v : {"", "0", "4,", ",4", " 4", "4 ", "4,0", "-1", "x"}) EXPECT_FALSE(is_openmp_thread_list(v)) << v;
}

// Before the OpenMP runtime loads: a value it would complain about is taken out of the
// environment block (and nothing else moves), and current_env() still sees it.
TEST(Threads, HideOmpNumThreadsFromOpenmpTakesOutOnlyARefusedValue) {
  char a[] = "A=1", bad[] = "OMP_NUM_THREADS=0", c[] = "C=3";
  char* envp[] = {a, bad, c, nullptr};
  hide_omp_num_threads_from_openmp(envp);
  EXPECT_STREQ(envp[0], "A=1");
  EXPECT_STREQ(envp[1], "C=3");
  EXPECT_EQ(envp[2], nullptr);
  char good[] = "OMP_NUM_THREADS=4,2";
  char* envp2[] = {a, good, nullptr};
  hide_omp_num_threads_from_openmp(envp2);
  EXPECT_STREQ(envp2[1], "OMP_NUM_THREADS=4,2");
  char* none[] = {nullptr};
  hide_omp_num_threads_from_openmp(none);
  EXPECT_EQ(none[0], nullptr);
}

// DDPBENCH_JOB_ID is compared and recorded as text: over 256 bytes or not UTF-8 is refused
// before any rank starts, naming the variable and the limit.
TEST(LaunchEnv, JobIdMustBeShortUtf8Text) {
  EXPECT_THAT(launch_error({{"DDPBENCH_JOB_ID", std::string(257, 'j')}}),
              HasSubstr("DDPBENCH_JOB_ID is 257 bytes, more than the 256 a job id may have"));
  EXPECT_THAT(launch_error({{"DDPBENCH_JOB_ID", "job\xFF"}}), HasSubstr("DDPBENCH_JOB_ID='job\xEF\xBF\xBD' is not valid UTF-8"));
  EXPECT_EQ(launch_error({{"DDPBENCH_JOB_ID", std::string(256, 'j')}}), "(no error)");
  EXPECT_EQ(launch_error({{"DDPBENCH_JOB_ID", "t\xC3\xA2" "che-1"}}), "(no error)");
  // Other launchers' ids are made valid text, never refused.
  EXPECT_EQ(launcher_job_id({{"TORCHELASTIC_RUN_ID", "r\xFF"}}, Launcher::kTorchrun), "torchrun:r\xEF\xBF\xBD");
}

TEST(Utf8, SanitizeReplacesBadBytesAndCutsBetweenCharacters) {
  EXPECT_EQ(sanitize_utf8("plain"), "plain");
  EXPECT_EQ(sanitize_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(sanitize_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");        // cut-off sequence
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");        // overlong '/'
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80").size(), 9u);                         // a surrogate: 3 replacements
  EXPECT_EQ(sanitize_utf8("\xE2\x82\xAC\xE2\x82\xAC", 5), "\xE2\x82\xAC");  // not half of the second
  EXPECT_EQ(sanitize_utf8("\xF0\x9F\x98\x80", 3), "");
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80 \xC3\xA9"));
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));
}

TEST(Threads, SlurmCpusPerTaskInAnSrunStepOnly) {
  EXPECT_EQ(threads_per_rank({{"SLURM_CPUS_PER_TASK", "12"}}, Launcher::kSlurm, 8, 96), 12);
  // A batch script's built-in launcher: its 2 ranks share the allocation's 2 CPUs.
  EXPECT_EQ(threads_per_rank({{"SLURM_CPUS_PER_TASK", "2"}}, Launcher::kLocalSpawner, 2, 2), 1);
}

TEST(Threads, CoresDividedByLocalRanks) {
  EXPECT_EQ(threads_per_rank({}, Launcher::kLocalSpawner, 2, 2), 1);
  EXPECT_EQ(threads_per_rank({}, Launcher::kTorchrun, 4, 64), 16);
  EXPECT_EQ(threads_per_rank({}, Launcher::kTorchrun, 8, 4), 1);  // never 0
  EXPECT_EQ(threads_per_rank({}, Launcher::kOpenMPI, 3, 16), 5);
}


// Every integer from a launcher is range-checked before it is narrowed to int: a value
// that wraps (2^32 + 1 is 1 as an int) or is beyond 64 bits is an error naming the variable.
TEST(LaunchEnv, IntegersAreRangeCheckedBeforeNarrowing) {
  const EnvMap srun = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_STEP_ID", "0"}};
  const EnvMap ompi = {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}};
  const EnvMap pmix = {{"PMIX_RANK", "0"}, {"PMI_SIZE", "2"}, {"MPI_LOCALNRANKS", "2"}};
  const EnvMap torchrun = {{"RANK", "0"}, {"WORLD_SIZE", "2"}};
  const auto with = [](EnvMap env, const std::string& key, const std::string& value) {
    env[key] = value;
    return env;
  };
  struct Case {
    EnvMap env;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {with(torchrun, "WORLD_SIZE", "4294967297"), "WORLD_SIZE=4294967297 is out of range; set it to 1..1048576"},
      {with(torchrun, "WORLD_SIZE", "1048577"), "WORLD_SIZE=1048577 is out of range; set it to 1..1048576"},
      {with(torchrun, "WORLD_SIZE", "99999999999999999999"), "WORLD_SIZE=99999999999999999999 is out of range"},
      {with(torchrun, "WORLD_SIZE", "0"), "WORLD_SIZE=0 is out of range"},
      {with(torchrun, "RANK", "-1"), "RANK=-1 is out of range; set it to 0..1048575"},
      {with(torchrun, "RANK", "4294967296"), "RANK=4294967296 is out of range"},
      {with(with(torchrun, "LOCAL_RANK", "0"), "LOCAL_WORLD_SIZE", "4294967298"), "LOCAL_WORLD_SIZE=4294967298"},
      {with(torchrun, "LOCAL_RANK", "-9223372036854775809"), "LOCAL_RANK=-9223372036854775809 is out of range"},
      {with(torchrun, "MASTER_PORT", "4294996796"), "MASTER_PORT=4294996796 is out of range; set it to 1..65535"},
      {with(torchrun, "MASTER_PORT", "0"), "MASTER_PORT=0 is out of range; set it to 1..65535"},
      {with(with(torchrun, "TORCHELASTIC_USE_AGENT_STORE", "True"), "TORCHELASTIC_RESTART_COUNT", "-1"),
       "TORCHELASTIC_RESTART_COUNT=-1 is out of range"},
      {with(ompi, "OMPI_COMM_WORLD_SIZE", "4294967297"), "OMPI_COMM_WORLD_SIZE=4294967297 is out of range"},
      {with(ompi, "OMPI_COMM_WORLD_RANK", "4294967296"), "OMPI_COMM_WORLD_RANK=4294967296 is out of range"},
      {with(ompi, "OMPI_COMM_WORLD_LOCAL_RANK", "-2"), "OMPI_COMM_WORLD_LOCAL_RANK=-2 is out of range"},
      {with(ompi, "OMPI_COMM_WORLD_LOCAL_SIZE", "2147483648"), "OMPI_COMM_WORLD_LOCAL_SIZE=2147483648 is out of range"},
      {with(ompi, "SLURM_JOB_ID", "-5"), "SLURM_JOB_ID=-5 is out of range; set it to 0..9223372036854775807"},
      {with(srun, "SLURM_NTASKS", "4294967297"), "SLURM_NTASKS=4294967297 is out of range"},
      {with(srun, "SLURM_STEP_NUM_TASKS", "0"), "SLURM_STEP_NUM_TASKS=0 is out of range"},
      {with(srun, "SLURM_PROCID", "4294967296"), "SLURM_PROCID=4294967296 is out of range"},
      {with(srun, "SLURM_LOCALID", "4294967296"), "SLURM_LOCALID=4294967296 is out of range"},
      {with(with(srun, "SLURM_TASKS_PER_NODE", "2"), "SLURM_NODEID", "-1"), "SLURM_NODEID=-1 is out of range"},
      {with(srun, "SLURM_TASKS_PER_NODE", "99999999999"),
       "SLURM_TASKS_PER_NODE=99999999999 is out of range; each node's task count must be 1..1048576"},
      {with(srun, "SLURM_TASKS_PER_NODE", "1(x2000000000)"),
       "SLURM_TASKS_PER_NODE=1(x2000000000) is out of range; each repetition count must be 1..1048576"},
      {with(srun, "SLURM_TASKS_PER_NODE", "1(x1048576),1"),
       "SLURM_TASKS_PER_NODE=1(x1048576),1 is out of range; it lists more than 1048576 nodes"},
      {with(srun, "SLURM_STEP_TASKS_PER_NODE", "0"), "SLURM_STEP_TASKS_PER_NODE=0 is out of range"},
      {with(srun, "SLURM_TASKS_PER_NODE", "2(x"), "SLURM_TASKS_PER_NODE='2(x' is malformed"},
      {with(srun, "SLURM_JOB_ID", "99999999999999999999"), "SLURM_JOB_ID=99999999999999999999 is out of range"},
      {with(pmix, "PMIX_RANK", "4294967296"), "PMIX_RANK=4294967296 is out of range"},
      {with(pmix, "PMI_SIZE", "4294967298"), "PMI_SIZE=4294967298 is out of range"},
      {with(pmix, "MPI_LOCALRANKID", "-1"), "MPI_LOCALRANKID=-1 is out of range"},
      {with(pmix, "MPI_LOCALNRANKS", "4294967298"), "MPI_LOCALNRANKS=4294967298 is out of range"},
      {with(torchrun, "WORLD_SIZE", "0x10"), "WORLD_SIZE='0x10' is not an integer"},
      {with(torchrun, "WORLD_SIZE", " 2"), "WORLD_SIZE=' 2' is not an integer"},
      // A local id beyond the node's task count (torchrun's LOCAL_RANK >= LOCAL_WORLD_SIZE is refused too).
      {with(with(srun, "SLURM_LOCALID", "3"), "SLURM_STEP_TASKS_PER_NODE", "1"),
       "Slurm environment: local rank 3 is outside 1 local ranks; fix the launcher environment"},
  };
  for (const auto& c : cases) EXPECT_THAT(launch_error(c.env), HasSubstr(c.expect));
  // The largest values still parse.
  EXPECT_EQ(detect_launch(with(with(torchrun, "WORLD_SIZE", "1048576"), "RANK", "1048575")).world_size, 1 << 20);
  EXPECT_EQ(detect_launch(with(ompi, "SLURM_JOB_ID", "9223372036854775807")).job_id, "9223372036854775807");
  EXPECT_EQ(detect_launch(with(torchrun, "MASTER_PORT", "65535")).master_port, 65535);
}

TEST(LaunchEnv, ParseBoundedNamesTheVariableAndRange) {
  EXPECT_EQ(parse_bounded("007", "X", 0, 10), 7);
  EXPECT_EQ(parse_bounded("-9223372036854775808", "X", std::numeric_limits<long long>::min(), 0),
            std::numeric_limits<long long>::min());
  EXPECT_EQ(parse_bounded("+5", "X", 0, 10), 5);
  EXPECT_THAT(usage_error([] { parse_bounded("11", "X", 0, 10); }), HasSubstr("X=11 is out of range; set it to 0..10"));
  EXPECT_THAT(usage_error([] { parse_bounded("9223372036854775808", "X", 0, 10); }), HasSubstr("out of range"));
  EXPECT_THAT(usage_error([] { parse_bounded("", "X", 0, 10); }), HasSubstr("X='' is not an integer"));
  EXPECT_THAT(usage_error([] { parse_bounded("-", "X", 0, 10); }), HasSubstr("is not an integer"));
  EXPECT_THAT(usage_error([] { parse_bounded("1e3", "X", 0, 10); }), HasSubstr("is not an integer"));
}

TEST(SlurmHostlist, TasksOnOneNodeWithoutExpanding) {
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 0), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 2), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 3), 1);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 4), 2);  // past the list: the first node's count
  EXPECT_EQ(slurm_tasks_on_node("4(x1048576)", 1048575), 4);
  EXPECT_EQ(slurm_tasks_per_node("1(x1048576)").size(), 1u << 20);  // the most it ever expands to
  EXPECT_THROW(slurm_tasks_on_node("1(x1048577)", 0), UsageError);
  EXPECT_THROW(slurm_tasks_per_node("1(x0)"), UsageError);
  EXPECT_THAT(usage_error([] { slurm_tasks_per_node("3,99999999999", "SLURM_STEP_TASKS_PER_NODE"); }),
              HasSubstr("SLURM_STEP_TASKS_PER_NODE=3,99999999999 is out of range"));
}

TEST(Threads, CountsAreBounded) {
  EXPECT_EQ(threads_per_rank({{"OMP_NUM_THREADS", "4096"}}, Launcher::kNone, 1, 4), 4096);
  EXPECT_THAT(usage_error([] {
                threads_per_rank({{"OMP_NUM_THREADS", "4097"}}, Launcher::kNone, 1, 4);
              }),
              HasSubstr("OMP_NUM_THREADS=4097 is out of range; set it to 1..4096"));
  EXPECT_THAT(usage_error([] {
                threads_per_rank({{"OMP_NUM_THREADS", "4294967297"}}, Launcher::kNone, 1, 4);
              }),
              HasSubstr("OMP_NUM_THREADS=4294967297 is out of range"));
  EXPECT_THAT(usage_error([] {
                threads_per_rank({{"SLURM_CPUS_PER_TASK", "0"}}, Launcher::kSlurm, 1, 4);
              }),
              HasSubstr("SLURM_CPUS_PER_TASK=0 is out of range; set it to 1..4096"));
}

TEST(LaunchEnv, UnknownRanksPerNodeAssumesAllLocal) {
  // Non-loopback MASTER_ADDR without LOCAL_WORLD_SIZE: never oversubscribe threads.
  const auto li = detect_launch({{"RANK", "0"}, {"WORLD_SIZE", "16"}, {"MASTER_ADDR", "10.1.2.3"}});
  EXPECT_EQ(li.local_rank, 0);
  EXPECT_EQ(li.local_world_size, 16);
}

}  // namespace
}  // namespace ddpbench

namespace ddpbench {
namespace {

// The kernel's cpulist format, as /sys/devices/system/cpu/online and `taskset -c` print it.
TEST(CpuList, FormatsRunsAsRangesAndParsesBack) {
  EXPECT_EQ(format_cpu_list({3, 0, 1, 2, 8, 10, 11}), "0-3,8,10,11");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_cpu_list({1, 1, 2}), "1,2");  // duplicates once; a run of 2 is not a range
  EXPECT_EQ(parse_cpu_list("0-3,8,10,11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  EXPECT_EQ(parse_cpu_list(format_cpu_list(affinity_cpus())), affinity_cpus());
  EXPECT_EQ(static_cast<int>(affinity_cpus().size()), usable_cpu_count());
  EXPECT_THROW(parse_cpu_list("3-1"), UsageError);
  EXPECT_THROW(parse_cpu_list("a"), UsageError);
  EXPECT_THROW(parse_cpu_list("-1"), UsageError);
  EXPECT_THROW(parse_cpu_list("0-1048576"), UsageError);
}

// Repeated or overlapping ranges are merged before they are expanded: a long list of the
// widest range costs one expansion, not one per item.
TEST(CpuList, RepeatedRangesExpandOnce) {
  std::string list = "0-1048575";
  for (int i = 0; i < 2000; ++i) list += ",0-1048575";
  EXPECT_EQ(parse_cpu_list(list).size(), 1u << 20);
  EXPECT_EQ(parse_cpu_list("5-9,0-6,2"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

}  // namespace
}  // namespace ddpbench
