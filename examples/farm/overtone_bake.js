// SPDX-License-Identifier: MIT
// Flamenco 3 job type: bake Overtone's secondary motion of a shot before it is rendered.
//
// Install: copy this file into the `scripts/` folder next to the Flamenco Manager executable and
// restart the Manager; "Overtone Bake" then appears as a job type in Blender's Flamenco panel.
// The job runs ONE task: Blender opens the shot headless and bakes every object with Overtone
// enabled (or the listed ones) over the scene's frame range, in order, writing each object's
// cache where its Point Cache path says (keep them `//`-relative so they land on shared storage
// beside the .blend). The task fails (non-zero exit) when any object fails; make render jobs
// depend on it. Needs the Overtone extension installed and enabled on every Worker.

const JOB_TYPE = {
  label: "Overtone Bake",
  description: "Bake Overtone secondary motion of every Overtone object (or the listed ones)",
  settings: [
    {
      key: "objects",
      type: "string",
      default: "",
      description: "Comma-separated object names to bake; empty bakes every Overtone object",
    },
    {
      key: "extension_module",
      type: "string",
      default: "bl_ext.user_default.overtone",
      description: "Python module of the installed extension (bl_ext.<repository>.overtone)",
      visible: "submission",
    },
    // Filled in by the Flamenco add-on with the (packed or shared) .blend of the shot.
    { key: "blendfile", type: "string", required: true, visible: "web",
      description: "The .blend to bake" },
  ],
};

function compileJob(job) {
  const settings = job.settings;
  const names = settings.objects
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
  const arg = names.length ? JSON.stringify(names) : "None";
  const expr = `import ${settings.extension_module} as o; o.batch.bake_all(${arg})`;
  const task = author.Task("overtone-bake", "blender");
  task.addCommand(
    author.Command("blender-render", {
      exe: "{blender}",
      exeArgs: "{blenderArgs}",
      argsBefore: [],
      blendfile: settings.blendfile,
      args: ["--python-expr", expr],
    })
  );
  job.addTask(task);
}
