// PMIx groups (PMIx_Group_construct / _destruct / _invite / _join /
// _leave, blocking and not) with real client processes: a construct among a
// server's own clients completes in the server with a context ID it
// assigns; one that spans nodes goes to the host's group up-call (and is
// refused without it); invitations and their events; leaving; and what is
// refused.
#include <doctest/doctest.h>
#include <pmix.h>
#include <pmix_server.h>

#include <string>
#include <vector>

#include "tests/e2e/host.hpp"

using namespace pmix::test;

namespace {

std::string finish(child& c) {
  CHECK_MESSAGE(c.exited_with(0), c.errors());
  return c.output();
}

const std::string invited = std::to_string(PMIX_GROUP_INVITED);
const std::string left = std::to_string(PMIX_GROUP_LEFT);
const std::string accepted = std::to_string(PMIX_GROUP_INVITE_ACCEPTED);
const std::string declined = std::to_string(PMIX_GROUP_INVITE_DECLINED);
const std::string failed = std::to_string(PMIX_GROUP_INVITE_FAILED);
const std::string complete = std::to_string(PMIX_GROUP_CONSTRUCT_COMPLETE);
const std::string member_failed = std::to_string(PMIX_GROUP_MEMBER_FAILED);

}  // namespace

TEST_SUITE("groups") {
  TEST_CASE("a construct among local clients completes in the server, each group with its own context ID") {
    temp_dir dir;
    host_slots slots;
    slots.group = true;  // present, and not called: every member is local
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("grp", 3, 3) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 3; ++r) {
      const std::string form = r == 2 ? "group_construct_nb" : "group_construct";
      std::vector<std::string> steps{"init", form + ":all:0,1,2:ctx", form + ":pair:0,1:ctx"};
      if (r == 2) steps = {"init", form + ":all:0,1,2:ctx"};
      steps.insert(steps.end(), {r == 1 ? "group_destruct_nb:all" : "group_destruct:all", "finalize"});
      ranks.push_back(launch_script("grp", r, steps, dir.path()));
    }
    std::vector<std::string> out;
    for (auto& c : ranks) out.push_back(finish(c));
    CAPTURE(out[0]);
    CAPTURE(out[1]);
    CAPTURE(out[2]);
    // Every member gets the same results; the two groups different IDs.
    std::string all_ctx;
    for (pmix_rank_t r = 0; r < 3; ++r) {
      const std::string form = r == 2 ? "group_construct_nb" : "group_construct";
      const auto at = out[r].find(form + ":all:0,1,2:ctx PMIX_SUCCESS id=all members=0,1,2 ctx=");
      REQUIRE(at != std::string::npos);
      const auto line = out[r].substr(at, out[r].find('\n', at) - at);
      const auto ctx = line.substr(line.rfind('=') + 1);
      CHECK(ctx != "none");
      if (all_ctx.empty()) all_ctx = ctx;
      CHECK(ctx == all_ctx);
    }
    const auto at = out[0].find("group_construct:pair:0,1:ctx PMIX_SUCCESS id=pair members=0,1 ctx=");
    REQUIRE(at != std::string::npos);
    const auto line = out[0].substr(at, out[0].find('\n', at) - at);
    const auto pair_ctx = line.substr(line.rfind('=') + 1);
    CHECK(pair_ctx != all_ctx);
    CHECK(contains(out[1], line.substr(line.find(' '))));  // the same results for rank 1
    CHECK(contains(out[0], "group_destruct:all PMIX_SUCCESS"));
    CHECK(contains(out[1], "group_destruct_nb:all PMIX_SUCCESS"));
    CHECK(contains(out[2], "group_destruct:all PMIX_SUCCESS"));
    CHECK(calls_starting("group:").empty());
  }

  TEST_CASE("a group's name stands for its members in a fence, connect and disconnect: {group, PMIX_RANK_WILDCARD} (issue 34.2)") {
    // Members of two jobs; each fences over the group, collecting, and
    // reads a member of the other job (refused with PMIX_ERR_BAD_PARAM: the
    // group's name is no namespace). A fence over gA alone, while the
    // group exists, still names gA (it named an empty namespace once: the
    // expansion moved the names out before knowing none was a group's).
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("gA", 2, 2) == PMIX_SUCCESS);
    REQUIRE(register_job("gB", 1, 1) == PMIX_SUCCESS);
    auto a0 = launch_script("gA", 0,
                            {"init", "put:a0=x", "commit", "group_construct:mix:0,1,gB/0", "fence_with:mix:collect",
                             "get_ns:gB:0:b0", "fence", "connect:mix", "disconnect:mix", "group_destruct:mix", "finalize"},
                            dir.path());
    auto a1 = launch_script("gA", 1,
                            {"init", "put:a1=y", "commit", "group_construct:mix:0,1,gB/0", "fence_with:mix:collect",
                             "fence", "connect:mix", "disconnect:mix", "group_destruct:mix", "finalize"},
                            dir.path());
    auto b0 = launch_script("gB", 0,
                            {"init", "put:b0=z", "commit", "group_construct:mix:gA/0,gA/1,0", "fence_with:mix:collect",
                             "get_ns:gA:1:a1", "connect:mix", "disconnect:mix", "group_destruct:mix", "finalize"},
                            dir.path());
    const auto outa0 = finish(a0), outa1 = finish(a1), outb0 = finish(b0);
    CAPTURE(outa0);
    CAPTURE(outb0);
    for (const auto* out : {&outa0, &outa1, &outb0}) CHECK(contains(*out, "fence_with:mix:collect PMIX_SUCCESS"));
    CHECK(contains(outa0, "get_ns:gB:0:b0 PMIX_SUCCESS z"));
    CHECK(contains(outb0, "get_ns:gA:1:a1 PMIX_SUCCESS y"));
    CHECK(contains(outa1, "group_destruct:mix PMIX_SUCCESS"));
    for (const auto* out : {&outa0, &outa1}) CHECK(contains(*out, "\nfence PMIX_SUCCESS"));
    // PMIx_Connect and PMIx_Disconnect over the group's name too.
    for (const auto* out : {&outa0, &outa1, &outb0})
      CHECK(contains(*out, "connect:mix PMIX_SUCCESS\ndisconnect:mix PMIX_SUCCESS"));
  }

  TEST_CASE("without a context ID request none is assigned; a destructed group is gone") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("plain", 2, 2) == PMIX_SUCCESS);
    auto r0 = launch_script(
        "plain", 0, {"init", "group_construct:g:0,1", "group_destruct:g", "group_destruct:g", "finalize"},
        dir.path());
    auto r1 = launch_script("plain", 1, {"init", "group_construct:g:0,1", "group_destruct:g", "finalize"},
                            dir.path());
    const auto out0 = finish(r0);
    const auto out1 = finish(r1);
    CAPTURE(out0);
    CHECK(contains(out0, "group_construct:g:0,1 PMIX_SUCCESS id=g members=0,1 ctx=none"));
    CHECK(contains(out1, "group_construct:g:0,1 PMIX_SUCCESS id=g members=0,1 ctx=none"));
    CHECK(contains(out0, "group_destruct:g PMIX_SUCCESS\ngroup_destruct:g PMIX_ERR_NOT_FOUND"));
  }

  TEST_CASE("a group goes with its members' namespace: after the deregistration its name is free (spec 004)") {
    // Spec 004: nothing that names a deregistered namespace may remain. A
    // group its processes made and never destructed used to stay for ever
    // (a loop of such constructs grew the server without bound), its name
    // taken (PMIX_ERR_EXISTS for any later job).
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("first", 1, 1) == PMIX_SUCCESS);
    REQUIRE(register_job("second", 1, 1) == PMIX_SUCCESS);
    auto made = launch_script("first", 0, {"init", "group_construct:kept:0", "group_construct:kept:0", "finalize"},
                              dir.path());
    const auto before = finish(made);
    CAPTURE(before);
    CHECK(contains(before, "group_construct:kept:0 PMIX_SUCCESS id=kept members=0"));
    CHECK(contains(before, "group_construct:kept:0 PMIX_ERR_EXISTS"));  // the name is taken while the group lives
    REQUIRE(deregister_job("first") == PMIX_SUCCESS);
    auto after = launch_script("second", 0, {"init", "group_construct:kept:0", "group_destruct:kept", "finalize"},
                               dir.path());
    const auto out = finish(after);
    CAPTURE(out);
    CHECK(contains(out, "group_construct:kept:0 PMIX_SUCCESS id=kept members=0"));
    CHECK(contains(out, "group_destruct:kept PMIX_SUCCESS"));
  }

  TEST_CASE("a construct spanning nodes goes to the host's group up-call, whose context ID the members get") {
    temp_dir dir;
    host_slots slots;
    slots.group = true;
    server srv(dir.path(), slots);
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("wide", 3, 2) == PMIX_SUCCESS);  // rank 2 on another node
    auto r0 = launch_script("wide", 0, {"init", "group_construct:w:*:ctx", "group_destruct:w", "finalize"},
                            dir.path());
    auto r1 = launch_script("wide", 1, {"init", "group_construct_nb:w:*:ctx", "group_destruct:w", "finalize"},
                            dir.path());
    const auto out0 = finish(r0);
    const auto out1 = finish(r1);
    CAPTURE(out0);
    CHECK(contains(out0, "group_construct:w:*:ctx PMIX_SUCCESS id=w members=* ctx=77\n"));
    CHECK(contains(out1, "group_construct_nb:w:*:ctx PMIX_SUCCESS id=w members=* ctx=77\n"));
    CHECK(contains(out0, "group_destruct:w PMIX_SUCCESS"));
    // With group info: the node's goes to the host as PMIX_GROUP_ENDPT_DATA,
    // and what the host brings back of the remote member (its made-up
    // PMIX_GROUP_LOCAL_CID 902) is read like a local member's.
    auto c0 = launch_script("wide", 0,
                            {"init", "group_construct:c:0,1,2:ctx+cid=5", "group_cid:1", "group_cid:2",
                             "group_destruct:c", "finalize"},
                            dir.path());
    auto c1 = launch_script("wide", 1, {"init", "group_construct:c:0,1,2:ctx+cid=6", "group_destruct:c", "finalize"},
                            dir.path());
    const auto outc0 = finish(c0);
    finish(c1);
    CAPTURE(outc0);
    CHECK(contains(outc0, "group_cid:1 PMIX_SUCCESS 6\ngroup_cid:2 PMIX_SUCCESS 902\n"));
    CHECK(calls_starting("group: op=" + std::to_string(PMIX_GROUP_CONSTRUCT) + " grp=c procs=3").size() == 1);
    CHECK(contains(calls_starting("group: op=" + std::to_string(PMIX_GROUP_CONSTRUCT) + " grp=c").at(0),
                   PMIX_GROUP_ENDPT_DATA));
    // Once per construct and destruct, for the whole node.
    CHECK(calls_starting("group: op=" + std::to_string(PMIX_GROUP_CONSTRUCT) +
                         " grp=w procs=1 keys: " + PMIX_GROUP_ASSIGN_CONTEXT_ID)
              .size() == 1);
    CHECK(calls_starting("group: op=" + std::to_string(PMIX_GROUP_DESTRUCT) + " grp=w procs=1").size() == 1);
  }

  TEST_CASE("Open MPI's pattern: each member's PMIX_GROUP_INFO is read, qualified by the context id, after the "
            "group is gone (issue 34.2)") {
    // Open MPI 5 constructs with PMIX_GROUP_ASSIGN_CONTEXT_ID and its local
    // communicator id as PMIX_GROUP_INFO {PMIX_GROUP_LOCAL_CID}, destructs,
    // and then reads each peer's id with PMIx_Get qualified by the group's
    // context id. The value is the group's: a later group's context id
    // finds nothing, and it is not the process's own data.
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("ompi", 3, 3) == PMIX_SUCCESS);
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 3; ++r) {
      const auto next = std::to_string((r + 1) % 3);
      ranks.push_back(launch_script(
          "ompi", r,
          {"init", "group_construct:cids:0,1,2:ctx+timeout=60+cid=" + std::to_string(10 + r),
           "group_destruct:cids", "group_cid:" + next, "group_cid:" + std::to_string(r),
           "group_construct:other:0,1,2:ctx", "group_cid:" + next, "group_destruct:other", "fence", "finalize"},
          dir.path()));
    }
    for (pmix_rank_t r = 0; r < 3; ++r) {
      const auto out = finish(ranks[r]);
      CAPTURE(out);
      const auto next = (r + 1) % 3;
      CHECK(contains(out, "group_destruct:cids PMIX_SUCCESS\ngroup_cid:" + std::to_string(next) + " PMIX_SUCCESS " +
                              std::to_string(10 + next) + "\ngroup_cid:" + std::to_string(r) + " PMIX_SUCCESS " +
                              std::to_string(10 + r) + "\n"));
      CHECK(contains(out, "group_construct:other:0,1,2:ctx PMIX_SUCCESS id=other members=0,1,2 ctx="));
      CHECK(contains(out, "group_cid:" + std::to_string(next) + " PMIX_ERR_NOT_FOUND\ngroup_destruct:other"));
    }
  }

  TEST_CASE("a group's name in PMIx_Get: {group, r} is the group's r-th member (issue 34.2)") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("gx", 1, 1) == PMIX_SUCCESS);
    REQUIRE(register_job("gy", 2, 2) == PMIX_SUCCESS);
    // Members, in order: gx.0, gy.0, gy.1.
    auto x0 = launch_script("gx", 0,
                            {"init", "put:mine=x0", "commit", "group_construct:both:0,gy/0,gy/1", "group_get:both:2:mine",
                             "group_get:both:0:mine", "group_get:both:3:mine", "group_destruct:both", "finalize"},
                            dir.path());
    auto y0 = launch_script("gy", 0,
                            {"init", "put:mine=y0", "commit", "group_construct:both:gx/0,0,1", "group_destruct:both",
                             "finalize"},
                            dir.path());
    auto y1 = launch_script("gy", 1,
                            {"init", "put:mine=y1", "commit", "group_construct:both:gx/0,0,1", "group_get:both:1:mine",
                             "group_destruct:both", "finalize"},
                            dir.path());
    const auto outx = finish(x0), outy0 = finish(y0), outy1 = finish(y1);
    CAPTURE(outx);
    CAPTURE(outy1);
    CHECK(contains(outx, "group_get:both:2:mine PMIX_SUCCESS y1"));
    CHECK(contains(outx, "group_get:both:0:mine PMIX_SUCCESS x0"));
    CHECK(contains(outx, "group_get:both:3:mine PMIX_ERR_NOT_FOUND"));
    CHECK(contains(outy1, "group_get:both:1:mine PMIX_SUCCESS y0"));
  }

  TEST_CASE("PMIX_GROUP_NOTIFY_TERMINATION: a member that dies is reported to the others and their destruct "
            "succeeds; without it the destruct fails (issue 34.2)") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("nt", 3, 3) == PMIX_SUCCESS);
    auto r2 = launch_script("nt", 2,
                            {"init", "group_construct:told:0,1,2:notify", "group_construct:plain:0,1,2", "crash"},
                            dir.path());
    std::vector<child> survivors;
    for (pmix_rank_t r = 0; r < 2; ++r)
      survivors.push_back(launch_script("nt", r,
                                        {"init", "on_group_event:" + member_failed,
                                         "group_construct:told:0,1,2:notify", "group_construct:plain:0,1,2",
                                         "wait_group_event:" + member_failed, "group_destruct:told",
                                         "group_destruct:plain", "finalize"},
                                        dir.path()));
    r2.wait();
    for (auto& c : survivors) {
      const auto out = finish(c);
      CAPTURE(out);
      CHECK(contains(out, "group_construct:told:0,1,2:notify PMIX_SUCCESS id=told members=0,1,2"));
      CHECK(contains(out, "wait_group_event:" + member_failed + " PMIX_SUCCESS nt.2 id=told affected=nt.2"));
      CHECK(contains(out, "group_destruct:told PMIX_SUCCESS"));
      CHECK(contains(out, "group_destruct:plain PMIX_ERR_PROC_TERM_WO_SYNC"));
    }
  }

  TEST_CASE("PMIX_GROUP_OPTIONAL: a member that ended before joining is left out and reported; without it the "
            "construct fails (issue 34.2)") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("opt", 3, 3) == PMIX_SUCCESS);
    auto r2 = launch_script("opt", 2, {"init", "crash"}, dir.path());
    r2.wait();
    std::vector<child> ranks;
    for (pmix_rank_t r = 0; r < 2; ++r)
      ranks.push_back(launch_script("opt", r,
                                    {"init", "on_group_event:" + member_failed, "group_construct:strict:0,1,2",
                                     "group_construct:loose:0,1,2:optional+ctx",
                                     "wait_group_event:" + member_failed, "group_destruct:loose", "finalize"},
                                    dir.path()));
    for (auto& c : ranks) {
      const auto out = finish(c);
      CAPTURE(out);
      CHECK(contains(out, "group_construct:strict:0,1,2 PMIX_ERR_PROC_TERM_WO_SYNC"));
      CHECK(contains(out, "group_construct:loose:0,1,2:optional+ctx PMIX_SUCCESS id=loose members=0,1 ctx="));
      CHECK(contains(out, "wait_group_event:" + member_failed + " PMIX_SUCCESS opt.2 id=loose affected=opt.2"));
      CHECK(contains(out, "group_destruct:loose PMIX_SUCCESS"));
    }
  }

  TEST_CASE("without the host's group up-call a construct spanning nodes is not supported") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("far", 2, 1) == PMIX_SUCCESS);
    auto r0 = launch_script("far", 0, {"init", "group_construct:f:0,1", "finalize"}, dir.path());
    const auto out = finish(r0);
    CHECK(contains(out, "group_construct:f:0,1 PMIX_ERR_NOT_SUPPORTED"));
  }

  TEST_CASE("invitations: accepted, declined, the events of each, and leaving") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("inv", 3, 3) == PMIX_SUCCESS);
    auto r1 = launch_script(
        "inv", 1,
        {"init", "on_group_event:" + invited, "on_group_event:" + complete, "wait_group_event:" + invited,
         "group_join:team:0:accept", "wait_group_event:" + complete, "group_leave:team", "finalize"},
        dir.path());
    auto r2 = launch_script("inv", 2,
                            {"init", "on_group_event:" + invited, "wait_group_event:" + invited,
                             "group_join_nb:team:-:decline", "finalize"},
                            dir.path());
    REQUIRE(wait_for_output(r1, "on_group_event:" + complete + " PMIX_SUCCESS"));
    REQUIRE(wait_for_output(r2, "on_group_event:" + invited + " PMIX_SUCCESS"));
    auto r0 =
        launch_script("inv", 0,
                      {"init", "on_group_event:" + accepted, "on_group_event:" + declined,
                       "on_group_event:" + left, "on_group_event:" + complete, "group_invite:team:1,2:ctx",
                       "wait_group_event:" + accepted, "wait_group_event:" + declined,
                       "wait_group_event:" + complete, "wait_group_event:" + left, "finalize"},
                      dir.path());
    const auto out0 = finish(r0);
    const auto out1 = finish(r1);
    const auto out2 = finish(r2);
    CAPTURE(out0);
    CAPTURE(out1);
    CAPTURE(out2);
    CHECK(contains(out0, "group_invite:team:1,2:ctx PMIX_SUCCESS id=team members=0,1 ctx="));
    CHECK(!contains(out0, "members=0,1 ctx=none"));
    CHECK(contains(out0, "wait_group_event:" + accepted + " PMIX_SUCCESS inv.1 id=team"));
    CHECK(contains(out0, "wait_group_event:" + declined + " PMIX_SUCCESS inv.2 id=team"));
    CHECK(contains(out0, "wait_group_event:" + complete + " PMIX_SUCCESS inv.0 id=team"));
    CHECK(contains(out0, "wait_group_event:" + left + " PMIX_SUCCESS inv.1 id=team"));
    CHECK(contains(out1, "wait_group_event:" + invited + " PMIX_SUCCESS inv.0 id=team"));
    CHECK(contains(out1, "group_join:team:0:accept PMIX_SUCCESS id=team members=0,1 ctx="));
    CHECK(contains(out1, "wait_group_event:" + complete + " PMIX_SUCCESS inv.0 id=team"));
    CHECK(contains(out1, "group_leave:team PMIX_SUCCESS"));
    CHECK(contains(out2, "wait_group_event:" + invited + " PMIX_SUCCESS inv.0 id=team"));
    CHECK(contains(out2, "group_join_nb:team:-:decline PMIX_SUCCESS"));
  }

  TEST_CASE("an invited process that dies unanswered fails its invitation; the rest of the group forms") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("gone", 2, 2) == PMIX_SUCCESS);
    auto r1 = launch_script(
        "gone", 1, {"init", "on_group_event:" + invited, "wait_group_event:" + invited, "crash"}, dir.path());
    REQUIRE(wait_for_output(r1, "on_group_event:" + invited + " PMIX_SUCCESS"));
    auto r0 = launch_script("gone", 0,
                            {"init", "on_group_event:" + failed, "group_invite_nb:solo:1",
                             "wait_group_event:" + failed, "finalize"},
                            dir.path());
    const auto out0 = finish(r0);
    r1.wait();
    CAPTURE(out0);
    CHECK(contains(out0, "group_invite_nb:solo:1 PMIX_SUCCESS id=solo members=0 ctx=none"));
    CHECK(contains(out0, "wait_group_event:" + failed + " PMIX_SUCCESS gone.1 id=solo"));
  }

  TEST_CASE(
      "refused: bad names, unknown groups, existing groups, joins without an invitation, remote invitees") {
    temp_dir dir;
    server srv(dir.path());
    REQUIRE(srv.status() == PMIX_SUCCESS);
    REQUIRE(register_job("bad", 3, 2) == PMIX_SUCCESS);  // rank 2 on another node
    const std::string long_name(PMIX_MAX_NSLEN + 1, 'x');
    auto r0 =
        launch_script("bad", 0,
                      {"init", "group_construct::0", "group_construct:" + long_name + ":0",
                       "group_leave:nothing", "group_destruct_nb:nothing", "group_join:nothing:1:accept",
                       "group_invite:far:2", "group_invite:self:0", "group_construct:one:0",
                       "group_construct:one:0", "group_construct_reqd:two:0:" PMIX_GROUP_FT_COLLECTIVE,
                       "group_leave_nb:one", "group_destruct:one", "finalize"},
                      dir.path());
    const auto out = finish(r0);
    CAPTURE(out);
    CHECK(contains(out, "group_construct::0 PMIX_ERR_BAD_PARAM"));
    CHECK(contains(out, "group_construct:" + long_name + ":0 PMIX_ERR_BAD_PARAM"));
    CHECK(contains(out, "group_leave:nothing PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "group_destruct_nb:nothing PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "group_join:nothing:1:accept PMIX_ERR_NOT_FOUND"));
    CHECK(contains(out, "group_invite:far:2 PMIX_ERR_NOT_SUPPORTED"));
    CHECK(contains(out, "group_invite:self:0 PMIX_ERR_BAD_PARAM"));  // nobody to invite
    CHECK(contains(out,
                   "group_construct:one:0 PMIX_SUCCESS id=one members=0 ctx=none\n"
                   "group_construct:one:0 PMIX_ERR_EXISTS"));
    CHECK(
        contains(out, "group_construct_reqd:two:0:" PMIX_GROUP_FT_COLLECTIVE " PMIX_ERR_NOT_SUPPORTED"));
    // The last member leaving ends the group.
    CHECK(contains(out, "group_leave_nb:one PMIX_SUCCESS\ngroup_destruct:one PMIX_ERR_NOT_FOUND"));
  }
}
