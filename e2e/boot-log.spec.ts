import { expect, test } from "./fixtures.ts";
import { ConsoleView } from "./pages/console-view.ts";

test("the boot log stays open until the live console connects, then folds away and opens on demand", async ({
  apiAs,
  pageAs,
  lab,
}) => {
  const alice = await apiAs("alice");
  const session = await alice.launchRunning(lab.id);

  const page = await pageAs("alice");
  // Until released, the console's websocket opens but nothing answers it: the VM runs, the console
  // never connects, as when the BFF is slow to reach the VM.
  let consoleReachesServer = false;
  await page.routeWebSocket(/\/api\/sessions\/[^/]+\/console/, (socket) => {
    if (consoleReachesServer) socket.connectToServer();
  });
  const student = new ConsoleView(page);
  await student.goto(session.id);
  const openLog = page.getByRole("region", { name: "Boot log" });
  await expect(openLog).toContainText("cloud-init: finished");
  await expect(student.region).toHaveAttribute("data-status", "connecting");

  consoleReachesServer = true;
  await page.reload();
  await expect(student.region).toHaveAttribute("data-status", "connected");
  await expect(openLog).toHaveCount(0);
  const folded = page.getByTestId("boot-log");
  await expect(folded).not.toHaveAttribute("open");
  await folded.getByText("Boot log (before you connected)").click();
  await expect(folded).toContainText("cloud-init: finished");
});
