// The environment a project's pages show and change: one select, at the top of every project page.
import type { Environment } from "@flagstaff/sdk";

/** An environment as the console names it: its name, and "(default)" for the project's default. */
export function environmentLabel(environment: Environment): string {
  const marks = [environment.default ? "default" : "", environment.protected ? "protected" : ""].filter(Boolean);
  return marks.length > 0 ? `${environment.name} (${marks.join(", ")})` : environment.name;
}

export function EnvironmentSwitcher(props: {
  environments: Environment[];
  selected: Environment;
  /** The key is bound to the one environment it lists. */
  bound: boolean;
  onChange: (id: string) => void;
}) {
  const { selected } = props;
  return (
    <div className="environment-bar">
      <label htmlFor="environment">Environment</label>
      <select
        id="environment"
        value={selected.id}
        aria-describedby="environment-help"
        onChange={(e) => props.onChange(e.target.value)}
      >
        {props.environments.map((e) => (
          <option key={e.id} value={e.id}>
            {environmentLabel(e)}
          </option>
        ))}
      </select>
      <span id="environment-help" className="help">
        {props.bound
          ? `This key is bound to ${selected.name}: it sees and changes no other environment`
          : `Flags show and change their configuration in ${selected.name}`}
        {selected.description ? ` (${selected.description}).` : "."}
      </span>
    </div>
  );
}
