/** What the test gives the programs: where the server is and whom they act as. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

declare const process: { env: Record<string, string | undefined>; exit(code: number): never };

export const env = {
  baseUrl: required('PIPO_BASE_URL'),
  apiKey: required('PIPO_API_KEY'),
  dashboardKey: required('PIPO_DASHBOARD_KEY'),
  accountId: required('PIPO_ACCOUNT_ID'),
  userId: required('PIPO_USER_ID'),
};

/** The program's findings, as one JSON line on stdout for the test to check. */
export function report(findings: Record<string, unknown>): never {
  console.log(JSON.stringify(findings));
  process.exit(0);
}
