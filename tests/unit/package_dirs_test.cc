// Operator package directories (runtimes/package_dirs.h, config
// languages.packages): a wheel built here and a node_modules tree, bound
// read-only into real jails of the runs that name them and into no other;
// the package probes list them; the config loader refuses directories that
// are not package directories and endpoints that name unknown ones.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "jail/host.h"
#include "runtimes/local_executor.h"
#include "runtimes/package_dirs.h"
#include "runtimes/package_probes.h"
#include "test_jail_host.h"

namespace airlock::runtimes {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

// A pure-Python wheel, made the way a build backend makes one: the package,
// its .dist-info (METADATA, WHEEL, RECORD), zipped.
void BuildWheel(const fs::path& dir) {
  const fs::path src = dir / "wheel-src";
  WriteFile(src / "airlock_demo_pkg/__init__.py", "VALUE = 42\n");
  WriteFile(src / "airlock_demo_pkg-1.2.3.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: airlock-demo-pkg\nVersion: 1.2.3\n");
  WriteFile(src / "airlock_demo_pkg-1.2.3.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: airlock-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n");
  WriteFile(src / "airlock_demo_pkg-1.2.3.dist-info/RECORD", "");
  const std::string cmd = "cd '" + src.string() + "' && /usr/bin/python3 -m zipfile -c '" +
                          (dir / "wheels/airlock_demo_pkg-1.2.3-py3-none-any.whl").string() +
                          "' airlock_demo_pkg airlock_demo_pkg-1.2.3.dist-info";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  fs::remove_all(src);
}

class PackageDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("airlock-package-dirs-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "wheels");
    ASSERT_NO_FATAL_FAILURE(BuildWheel(dir_));
    WriteFile(dir_ / "wheels/treepkg/__init__.py", "NAME = 'tree'\n");  // a `pip install --target` tree
    WriteFile(dir_ / "node/demo-mod/package.json", R"({"name": "demo-mod", "version": "0.4.0", "main": "index.js"})");
    WriteFile(dir_ / "node/demo-mod/index.js", "module.exports = {answer: 42};\n");
    fs::create_directories(dir_ / "rubygems");  // filled by the Ruby test
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);

    auto host = tests::CreateJailHost();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(*host);
    auto executor = LocalExecutor::Create(*host_, {}, BuiltinLanguages());
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    executor_ = std::move(*executor);
    auto dirs = std::make_unique<PackageDirs>(
        std::vector<PackageDir>{{"team", "python", (dir_ / "wheels").string()},
                                {"mods", "javascript", (dir_ / "node").string()},
                                {"gems", "ruby", (dir_ / "rubygems").string()}},
        (dir_ / "hook").string());
    ASSERT_TRUE(dirs->Prepare().ok());
    executor_->EnablePackageDirs(std::move(dirs));
  }
  void TearDown() override {
    executor_.reset();
    host_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  RunResult Run(const std::string& language, const std::string& code, std::vector<std::string> packages = {}) {
    RunRequest req;
    req.language = language;
    req.code = code;
    req.packages = std::move(packages);
    CancelToken cancel;
    return executor_->Run(req, nullptr, cancel);
  }

  fs::path dir_;
  std::unique_ptr<jail::JailHost> host_;
  std::unique_ptr<LocalExecutor> executor_;
};

TEST_F(PackageDirsTest, PythonImportsTheWheelAndTheTreeOnlyWhenTheRunNamesTheDirectory) {
  const std::string code =
      "import airlock_demo_pkg, treepkg\n"
      "print(airlock_demo_pkg.VALUE, treepkg.NAME, airlock_demo_pkg.__file__)\n";
  RunResult with = Run("python", code, {"team"});
  ASSERT_EQ(with.status, RunStatus::kOk) << with.message;
  EXPECT_EQ(with.exit_code, 0) << with.stderr_text;
  EXPECT_EQ(with.stdout_text,
            "42 tree /opt/airlock/packages/team/airlock_demo_pkg-1.2.3-py3-none-any.whl/airlock_demo_pkg/__init__.py\n");

  RunResult without = Run("python", code);
  ASSERT_EQ(without.status, RunStatus::kExitNonzero) << without.message;
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_NE(without.stderr_text.find("ModuleNotFoundError: No module named 'airlock_demo_pkg'"), std::string::npos)
      << without.stderr_text;
}

TEST_F(PackageDirsTest, OnlyTheNamedDirectoryIsBoundAndItIsReadOnly) {
  const std::string code =
      "import os\n"
      "try:\n"
      "    open('/opt/airlock/packages/team/planted.py', 'w').write('x = 1')\n"
      "    print('WROTE')\n"
      "except OSError:\n"
      "    print('refused')\n"
      "print(os.listdir('/opt/airlock/packages'))\n"
      "print(sorted(os.listdir('/opt/airlock/packages/team')))\n";
  RunResult r = Run("python", code, {"team"});
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  // javascript's "mods" is not there, nor the wheels directory's parent
  // (which holds it and the hook), nor anything written from inside.
  EXPECT_EQ(r.stdout_text, "refused\n['team']\n['airlock_demo_pkg-1.2.3-py3-none-any.whl', 'treepkg']\n")
      << r.stderr_text;
  EXPECT_FALSE(fs::exists(dir_ / "wheels/planted.py"));
}

TEST_F(PackageDirsTest, SymlinksInTheDirectoryDoNotReachTheHost) {
  // Planted in the operator's directory (by a careless package or an
  // attacker with write access there): absolute and relative links to host
  // files outside it. In the jail they resolve in the jail's own tree.
  WriteFile(dir_ / "secret.txt", "host-secret-5f2c\n");
  fs::create_symlink(dir_ / "secret.txt", dir_ / "wheels/abs_link");
  fs::create_symlink("../secret.txt", dir_ / "wheels/rel_link");
  const std::string code =
      "for p in ('abs_link', 'rel_link'):\n"
      "    try:\n"
      "        print(p, open('/opt/airlock/packages/team/' + p).read().strip())\n"
      "    except OSError as e:\n"
      "        print(p, type(e).__name__)\n";
  RunResult r = Run("python", code, {"team"});
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.stdout_text, "abs_link FileNotFoundError\nrel_link FileNotFoundError\n") << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("host-secret"), std::string::npos);
}

TEST_F(PackageDirsTest, ThePythonProbeListsTheWheelOnlyWithTheDirectory) {
  const std::string probe = *PackageProbeProgram("python", "native");
  for (bool with : {true, false}) {
    RunResult r = Run("python", probe, with ? std::vector<std::string>{"team"} : std::vector<std::string>{});
    ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    StatusOr<std::vector<PackageEntry>> list = ParsePackageProbeOutput(r.stdout_text);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    bool found = false;
    for (const PackageEntry& e : *list) found = found || (e.name == "airlock-demo-pkg" && e.version == "1.2.3");
    EXPECT_EQ(found, with) << r.stdout_text.substr(0, 400);
  }
}

TEST_F(PackageDirsTest, JavaScriptAndTypeScriptRequireTheNodeModulesTree) {
  RunResult js = Run("javascript", "console.log(require('demo-mod').answer);", {"mods"});
  ASSERT_EQ(js.status, RunStatus::kOk) << js.message;
  EXPECT_EQ(js.stdout_text, "42\n") << js.stderr_text;

  RunResult without = Run("javascript", "console.log(require('demo-mod').answer);");
  ASSERT_EQ(without.status, RunStatus::kExitNonzero) << without.message;
  EXPECT_NE(without.exit_code, 0);
  EXPECT_NE(without.stderr_text.find("Cannot find module 'demo-mod'"), std::string::npos) << without.stderr_text;

  if (executor_->Find("typescript") != nullptr) {
    RunResult ts = Run("typescript", "import {answer} from 'demo-mod';\nconst a: number = answer;\nconsole.log(a);\n",
                       {"mods"});
    ASSERT_EQ(ts.status, RunStatus::kOk) << ts.message << ts.compile_output;
    EXPECT_EQ(ts.stdout_text, "42\n") << ts.stderr_text << ts.compile_output;
  }

  RunResult probe = Run("javascript", *PackageProbeProgram("javascript", "native"), {"mods"});
  ASSERT_EQ(probe.status, RunStatus::kOk) << probe.message;
  EXPECT_NE(probe.stdout_text.find(R"(["demo-mod","0.4.0","package"])"), std::string::npos)
      << probe.stdout_text.substr(0, 300) << probe.stderr_text;
}

TEST_F(PackageDirsTest, PooledPreStartedInterpretersAreAShapeOfTheirOwn) {
  executor_->EnablePool({}, {}, /*prestart=*/true);
  const std::string code = "import airlock_demo_pkg\nprint(airlock_demo_pkg.VALUE)\n";
  // The first run misses and raises the shape's target; later ones take
  // pre-started interpreters made with the directory bound.
  for (int i = 0; i < 40 && executor_->prestarted_runs() < 2; ++i) {
    RunResult r = Run("python", code, {"team"});
    ASSERT_EQ(r.status, RunStatus::kOk) << r.message << r.stderr_text;
    ASSERT_EQ(r.stdout_text, "42\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  EXPECT_GE(executor_->prestarted_runs(), 2u);
  // A run without it never gets one of those interpreters.
  for (int i = 0; i < 3; ++i) {
    RunResult plain = Run("python", code);
    ASSERT_EQ(plain.status, RunStatus::kExitNonzero) << plain.message;
    EXPECT_NE(plain.stderr_text.find("No module named 'airlock_demo_pkg'"), std::string::npos) << plain.stderr_text;
  }
}

TEST_F(PackageDirsTest, RubyRequiresAGemInstalledIntoTheDirectory) {
  if (executor_->Find("ruby") == nullptr || access("/usr/bin/gem", X_OK) != 0) GTEST_SKIP() << "no ruby or gem";
  // A gem built and installed here, offline, as an operator would.
  const fs::path src = dir_ / "gem-src";
  WriteFile(src / "lib/airlock_demo_gem.rb", "module AirlockDemoGem\n  VALUE = 99\nend\n");
  WriteFile(src / "airlock_demo_gem.gemspec",
            "Gem::Specification.new do |s|\n  s.name = 'airlock_demo_gem'\n  s.version = '0.3.0'\n"
            "  s.summary = 'airlock test'\n  s.authors = ['airlock']\n  s.license = 'MIT'\n"
            "  s.files = ['lib/airlock_demo_gem.rb']\nend\n");
  const std::string cmd = "cd '" + src.string() + "' && HOME='" + src.string() +
                          "' gem build airlock_demo_gem.gemspec >/dev/null 2>&1 && HOME='" + src.string() +
                          "' gem install --local --no-document --install-dir '" + (dir_ / "rubygems").string() +
                          "' airlock_demo_gem-0.3.0.gem >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  const std::string code = "require 'airlock_demo_gem'\nputs AirlockDemoGem::VALUE\n";
  RunResult with = Run("ruby", code, {"gems"});
  ASSERT_EQ(with.status, RunStatus::kOk) << with.message << with.stderr_text;
  EXPECT_EQ(with.stdout_text, "99\n");
  RunResult without = Run("ruby", code);
  ASSERT_EQ(without.status, RunStatus::kExitNonzero) << without.message;
  EXPECT_NE(without.stderr_text.find("cannot load such file -- airlock_demo_gem"), std::string::npos)
      << without.stderr_text;

  RunResult probe = Run("ruby", *PackageProbeProgram("ruby", "native"), {"gems"});
  ASSERT_EQ(probe.status, RunStatus::kOk) << probe.message << probe.stderr_text;
  EXPECT_NE(probe.stdout_text.find(R"(["airlock_demo_gem","0.3.0","gem"])"), std::string::npos)
      << probe.stdout_text.substr(0, 400);
  EXPECT_NE(probe.stdout_text.find(R"("json")"), std::string::npos) << "Ruby's default gems were lost";
}

TEST_F(PackageDirsTest, UnknownOrForeignDirectoriesAreRefused) {
  RunResult unknown = Run("python", "print(1)", {"nope"});
  EXPECT_EQ(unknown.error_code, "invalid_request");
  EXPECT_NE(unknown.message.find("\"nope\" is not configured"), std::string::npos) << unknown.message;

  RunResult foreign = Run("python", "print(1)", {"mods"});
  EXPECT_EQ(foreign.error_code, "invalid_request");
  EXPECT_NE(foreign.message.find("holds javascript packages, not python"), std::string::npos) << foreign.message;
}

TEST_F(PackageDirsTest, ASessionKeepsItsDirectories) {
  SessionSpec spec{.id = "s_packages", .language = "python", .packages = {"team"}};
  ASSERT_TRUE(executor_->OpenSession(spec).ok());
  RunRequest cell;
  cell.language = "python";
  cell.session_id = spec.id;
  cell.code = "import airlock_demo_pkg\nv = airlock_demo_pkg.VALUE\n";
  CancelToken cancel;
  RunResult first = executor_->Run(cell, nullptr, cancel);
  ASSERT_EQ(first.status, RunStatus::kOk) << first.message << first.stderr_text;
  cell.code = "print(v + 1)\n";
  RunResult second = executor_->Run(cell, nullptr, cancel);
  ASSERT_EQ(second.status, RunStatus::kOk) << second.message;
  EXPECT_EQ(second.stdout_text, "43\n") << second.stderr_text;
  EXPECT_TRUE(executor_->CloseSession(spec.id).ok());
}

TEST(PackageDirValidation, OnlyDirectoriesThatHoldPackages) {
  const std::string tmp = fs::temp_directory_path().string();
  EXPECT_TRUE(ValidatePackageDir({"team", "python", tmp}).ok());
  EXPECT_FALSE(ValidatePackageDir({"team", "python", "/"}).ok());
  EXPECT_FALSE(ValidatePackageDir({"team", "python", "/etc/python3"}).ok());
  EXPECT_FALSE(ValidatePackageDir({"team", "python", "/proc/self"}).ok());
  EXPECT_FALSE(ValidatePackageDir({"team", "python", "relative/dir"}).ok());
  EXPECT_FALSE(ValidatePackageDir({"team", "python", "/bin/sh"}).ok());  // not a directory
  EXPECT_FALSE(ValidatePackageDir({"team", "python", "/no/such/dir"}).ok());
  EXPECT_FALSE(ValidatePackageDir({"Team", "python", tmp}).ok());
  EXPECT_FALSE(ValidatePackageDir({"", "python", tmp}).ok());
  EXPECT_TRUE(ValidatePackageDir({"team", "ruby", tmp}).ok());
  EXPECT_FALSE(ValidatePackageDir({"team", "php", tmp}).ok());
}

TEST(PackageDirConfig, TheLoaderReadsDirectoriesAndChecksEndpointNames) {
  const std::string tmp = fs::temp_directory_path().string();
  StatusOr<config::Config> ok = config::ParseConfig(
      R"({"languages": {"packages": {"team": {"language": "python", "path": ")" + tmp + R"("}}},
          "endpoints": {"a": {"packages": ["team"]}, "b": {"packages": []}, "c": {}}})");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->languages.packages.count("team"), 1u);
  EXPECT_EQ(ok->languages.packages.at("team").language, "python");
  EXPECT_EQ(config::ConfigToJson(*ok)["languages"]["packages"]["team"]["path"], tmp);

  StatusOr<config::Config> unknown = config::ParseConfig(
      R"({"languages": {"packages": {"team": {"language": "python", "path": ")" + tmp + R"("}}},
          "endpoints": {"a": {"packages": ["tem"]}}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("config.endpoints.a.packages[0]: \"tem\" is not a package directory"),
            std::string::npos)
      << unknown.status().message();

  // A run takes at most kMaxPackageDirsPerRun of its language's: an
  // endpoint that would bind more is refused when the config loads, not on
  // every run.
  std::string nine;
  for (int i = 0; i < 9; ++i) {
    nine += std::string(i ? "," : "") + "\"w" + std::to_string(i) + "\": {\"language\": \"python\", \"path\": \"" + tmp +
            "\"}";
  }
  StatusOr<config::Config> too_many = config::ParseConfig(R"({"languages": {"packages": {)" + nine + "}}}");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("more than 8 python package directories"), std::string::npos)
      << too_many.status().message();
  StatusOr<config::Config> chosen = config::ParseConfig(R"({"languages": {"packages": {)" + nine +
                                                        R"(}}, "endpoints": {"a": {"packages": ["w1", "w2"]}}})");
  EXPECT_TRUE(chosen.ok()) << chosen.status().ToString();
  StatusOr<config::Config> all = config::ParseConfig(R"({"languages": {"packages": {)" + nine +
                                                     R"(}}, "endpoints": {"a": {"packages": ["w1"]}, "b": {}}})");
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("config.endpoints.b.packages: more than 8"), std::string::npos)
      << all.status().message();

  StatusOr<config::Config> root = config::ParseConfig(
      R"({"languages": {"packages": {"all": {"language": "python", "path": "/"}}}})");
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("config.languages.packages.all: path: / would bind the whole host"),
            std::string::npos)
      << root.status().message();
}

}  // namespace
}  // namespace airlock::runtimes
